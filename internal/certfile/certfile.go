package certfile

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// CheckEvery bounds how often handshakes look at the files: two stat calls
// per period whatever the handshake rate.
const CheckEvery = 10 * time.Second

// Pair is a certificate and its key, read from two files. Its
// GetCertificate goes in a tls.Config.
type Pair struct {
	// Report, when set, hears each load after the first: the new leaf, or
	// why the files did not load (the old pair is still served). Set it
	// before the first handshake; it runs on a handshake's goroutine.
	Report func(leaf *x509.Certificate, err error)

	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]

	mu   sync.Mutex // one look at the files at a time
	next time.Time  // when the files are looked at again
	seen stamp      // the files as last loaded, or tried
}

// stamp tells one version of the two files from another: modification
// times in Unix nanoseconds, and sizes.
type stamp struct {
	certMod, keyMod   int64
	certSize, keySize int64
}

// Load reads the pair; an error names what is wrong with it.
func Load(certFile, keyFile string) (*Pair, error) {
	p := &Pair{certFile: certFile, keyFile: keyFile}
	st, err := p.stamp()
	if err != nil {
		return nil, err
	}
	if err := p.load(); err != nil {
		return nil, err
	}
	p.seen, p.next = st, time.Now().Add(CheckEvery)
	return p, nil
}

// Leaf is the certificate served now.
func (p *Pair) Leaf() *x509.Certificate { return p.cur.Load().Leaf }

// GetCertificate serves the current pair, loading the files again first
// when they changed since the last look (at most once per CheckEvery).
func (p *Pair) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	p.check(time.Now())
	return p.cur.Load(), nil
}

// check looks at the files when it is time to, unless another handshake
// is already looking.
func (p *Pair) check(now time.Time) {
	if !p.mu.TryLock() {
		return
	}
	defer p.mu.Unlock()
	if now.Before(p.next) {
		return
	}
	p.next = now.Add(CheckEvery)
	st, err := p.stamp()
	if err == nil {
		if st == p.seen {
			return
		}
		// Tried once per version: a pair that does not load is tried
		// again when either file changes.
		p.seen = st
		err = p.load()
	}
	if p.Report != nil {
		if err != nil {
			p.Report(nil, err)
		} else {
			p.Report(p.Leaf(), nil)
		}
	}
}

func (p *Pair) stamp() (stamp, error) {
	c, err := os.Stat(p.certFile)
	if err != nil {
		return stamp{}, err
	}
	k, err := os.Stat(p.keyFile)
	if err != nil {
		return stamp{}, err
	}
	return stamp{certMod: c.ModTime().UnixNano(), keyMod: k.ModTime().UnixNano(), certSize: c.Size(), keySize: k.Size()}, nil
}

func (p *Pair) load() error {
	pair, err := tls.LoadX509KeyPair(p.certFile, p.keyFile)
	if err != nil {
		return err
	}
	if pair.Leaf == nil { // set by LoadX509KeyPair since Go 1.23
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return err
		}
	}
	p.cur.Store(&pair)
	return nil
}
