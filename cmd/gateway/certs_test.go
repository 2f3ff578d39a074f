package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testCert writes a self-signed CA-capable certificate for 127.0.0.1 and
// its key into dir, returning their paths and the parsed certificate.
func testCert(t *testing.T, dir string) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "weftgate test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err = x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", kb)
	return certFile, keyFile, cert
}

func writePEM(t *testing.T, file, typ string, b []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Each listener's pair reports its reloads to the log: a renewal at INFO
// with its subject, a pair that did not load at WARN, each with the flag
// that names it.
func TestCertificateReloadsAreLogged(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, cert := testCert(t, dir)
	var logs lockedBuffer
	ta := newTestAppLog(t, slog.New(slog.NewTextHandler(&logs, nil)),
		"-tls-cert", certFile, "-tls-key", keyFile, "-grpc-tls-cert", certFile, "-grpc-tls-key", keyFile)
	for _, flag := range []string{"tls-cert", "grpc-tls-cert"} {
		pair := ta.res.certs[flag]
		if pair == nil || pair.Report == nil {
			t.Fatalf("%s: no pair, or nothing hears its reloads", flag)
		}
		pair.Report(cert, nil)
		pair.Report(nil, errors.New("tls: private key does not match public key"))
		l := logs.String()
		if !strings.Contains(l, `level=INFO msg="tls certificate reloaded" flag=`+flag+` subject="CN=weftgate test"`) ||
			!strings.Contains(l, `level=WARN msg="tls certificate not reloaded; the old one is still served" flag=`+flag+` err="tls: private key does not match public key"`) {
			t.Fatalf("%s: reloads not logged:\n%s", flag, l)
		}
	}
}

// /metrics gives each served certificate's expiry, for an alert before a
// renewal that did not land runs out.
func TestCertificateExpiryIsAMetric(t *testing.T) {
	certFile, keyFile, cert := testCert(t, t.TempDir())
	ta := newTestApp(t, "-tls-cert", certFile, "-tls-key", keyFile, "-grpc-tls-cert", certFile, "-grpc-tls-key", keyFile)
	_, body := ta.get(t, "/metrics", nil)
	for _, flag := range []string{"tls-cert", "grpc-tls-cert"} {
		prefix := `weftgate_tls_certificate_expiry_timestamp_seconds{flag="` + flag + `"} `
		var got float64
		for _, line := range strings.Split(body, "\n") {
			if v, ok := strings.CutPrefix(line, prefix); ok {
				got, _ = strconv.ParseFloat(v, 64)
			}
		}
		if int64(got) != cert.NotAfter.Unix() {
			t.Errorf("%s: expiry %v, want %d", flag, got, cert.NotAfter.Unix())
		}
	}
	// Without TLS there is no series at all.
	if _, body := newTestApp(t).get(t, "/metrics", nil); strings.Contains(body, "weftgate_tls_certificate_expiry") {
		t.Error("a plain gateway reports a certificate expiry")
	}
}
