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
