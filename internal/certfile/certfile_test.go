package certfile

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writePair writes a self-signed certificate for 127.0.0.1 with serial
// into the two files, and dates both files at mod, so that a rewrite is
// seen however coarse the file system's clock is.
func writePair(t *testing.T, certFile, keyFile string, serial int64, mod time.Time) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial),
		Subject:               pkix.Name{CommonName: "certfile test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), mod)
	write(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), mod)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func write(t *testing.T, file string, b []byte, mod time.Time) {
	t.Helper()
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, mod, mod); err != nil {
		t.Fatal(err)
	}
}

func files(t *testing.T) (string, string) {
	dir := t.TempDir()
	return filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
}

// served is the serial a handshake at now would be served.
func served(t *testing.T, p *Pair, now time.Time) int64 {
	t.Helper()
	p.check(now)
	c, err := p.GetCertificate(nil)
	if err != nil || c.Leaf == nil {
		t.Fatalf("GetCertificate: %v, %v", c, err)
	}
	return c.Leaf.SerialNumber.Int64()
}

type report struct {
	serial int64
	err    error
}

func recorder(p *Pair) *[]report {
	var got []report
	p.Report = func(leaf *x509.Certificate, err error) {
		r := report{err: err}
		if leaf != nil {
			r.serial = leaf.SerialNumber.Int64()
		}
		got = append(got, r)
	}
	return &got
}

// loaded is a pair loaded from files that hold serial 1, dated an hour
// before t0, with its reports recorded.
func loaded(t *testing.T) (p *Pair, cf, kf string, t0 time.Time, got *[]report) {
	t.Helper()
	cf, kf = files(t)
	t0 = time.Now()
	writePair(t, cf, kf, 1, t0.Add(-time.Hour))
	p, err := Load(cf, kf)
	if err != nil {
		t.Fatal(err)
	}
	return p, cf, kf, t0, recorder(p)
}

// A renewal is served from the first look after it, which comes at most
// CheckEvery after the last; meanwhile the old pair is served.
func TestARenewedPairIsServedAtTheNextLook(t *testing.T) {
	p, cf, kf, t0, got := loaded(t)
	writePair(t, cf, kf, 2, t0)
	if s := served(t, p, p.next.Add(-time.Millisecond)); s != 1 {
		t.Fatalf("before the next look: serial %d, want 1", s)
	}
	if s := served(t, p, p.next); s != 2 {
		t.Fatalf("at the next look: serial %d, want 2", s)
	}
	if len(*got) != 1 || (*got)[0] != (report{serial: 2}) {
		t.Fatalf("reports %+v, want one of serial 2", *got)
	}
	// Unchanged files are not loaded again.
	if s := served(t, p, p.next); s != 2 || len(*got) != 1 {
		t.Fatalf("unchanged: serial %d, %d reports", s, len(*got))
	}
}

// A renewal caught half-written is reported, the old pair is still
// served, and the pair is tried again once the files change.
func TestAPairThatDoesNotLoadKeepsTheOldOne(t *testing.T) {
	p, cf, kf, t0, got := loaded(t)
	write(t, cf, []byte("-----BEGIN CERTIFICATE-----\nnot yet\n"), t0.Add(-time.Minute))
	if s := served(t, p, p.next); s != 1 {
		t.Fatalf("half-written: serial %d, want the old 1", s)
	}
	if len(*got) != 1 || (*got)[0].err == nil {
		t.Fatalf("reports %+v, want the error", *got)
	}
	if s := served(t, p, p.next); s != 1 || len(*got) != 1 {
		t.Fatalf("the same broken files were tried again: serial %d, %d reports", s, len(*got))
	}
	// A missing file is reported at each look and changes nothing.
	if err := os.Remove(kf); err != nil {
		t.Fatal(err)
	}
	if s := served(t, p, p.next); s != 1 || len(*got) != 2 || !errors.Is((*got)[1].err, os.ErrNotExist) {
		t.Fatalf("missing key: serial %d, reports %+v", s, *got)
	}
	writePair(t, cf, kf, 3, t0)
	if s := served(t, p, p.next); s != 3 {
		t.Fatalf("once written whole: serial %d, want 3", s)
	}
}

// Load refuses what would not serve.
func TestLoadRefusesABadPair(t *testing.T) {
	cf, kf := files(t)
	if _, err := Load(cf, kf); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no files: %v", err)
	}
	writePair(t, cf, kf, 1, time.Now())
	other, otherKey := files(t)
	writePair(t, other, otherKey, 2, time.Now())
	if _, err := Load(cf, otherKey); err == nil {
		t.Fatal("a key that is not the certificate's loaded")
	}
}

// Over a real handshake: a client sees the renewed certificate on its
// next connection, and an open connection is not disturbed.
func TestHandshakesSeeTheRenewal(t *testing.T) {
	p, cf, kf, t0, _ := loaded(t)
	c1 := p.Leaf()
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{GetCertificate: p.GetCertificate, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.(*tls.Conn).Handshake()
				_, _ = c.Read(make([]byte, 1)) // until the client closes
			}()
		}
	}()
	roots := x509.NewCertPool()
	roots.AddCert(c1)
	dial := func() *tls.Conn {
		t.Helper()
		c, err := tls.Dial("tcp", l.Addr().String(), &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := dial()
	defer first.Close()
	c2 := writePair(t, cf, kf, 2, t0)
	roots.AddCert(c2)
	p.mu.Lock()
	p.next = time.Time{} // the next handshake looks
	p.mu.Unlock()
	second := dial()
	defer second.Close()
	if s := second.ConnectionState().PeerCertificates[0].SerialNumber.Int64(); s != 2 {
		t.Fatalf("a connection after the renewal got serial %d, want 2", s)
	}
	if s := first.ConnectionState().PeerCertificates[0].SerialNumber.Int64(); s != 1 {
		t.Fatalf("the open connection's serial changed to %d", s)
	}
}
