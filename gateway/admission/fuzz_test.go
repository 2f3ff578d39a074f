package admission

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines: TestRefusalIsNotUpgraded starts an
// HTTP server. (It lives with the fuzz targets, the package's only other
// new test file of issue 8.)
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// FuzzOrigin: the Origin rule never panics, a normalised origin is a fixed
// point, and whatever passes is exactly the request's own host or an entry
// of the allow-list, with no path, query, fragment or credentials.
func FuzzOrigin(f *testing.F) {
	for _, s := range [][2]string{
		{"app.test", "http://app.test"}, {"app.test", "https://evil.test"}, {"app.test", "null"},
		{"app.test:8080", "http://APP.test:8080"}, {"app.test", "http://app.test/"}, {"app.test", "http://u@app.test"},
		{"app.test", "http://app.test#x"}, {"app.test", "http://app.test:"}, {"", "https://allowed.example"},
		{"app.test", "javascript:alert(1)"}, {"[::1]:80", "http://[::1]:80"}, {"app.test", " http://app.test"},
	} {
		f.Add(s[0], s[1])
	}
	o := newOrigins([]string{"https://allowed.example", "http://Other.example:8080/"})
	f.Fuzz(func(t *testing.T, host, origin string) {
		n, ok := normalOrigin(origin)
		if ok {
			if again, ok2 := normalOrigin(n); !ok2 || again != n {
				t.Fatalf("normalOrigin(%q) = %q, which normalises to %q, %v", origin, n, again, ok2)
			}
			if strings.ContainsAny(n[strings.Index(n, "://")+3:], "/?#@ \t") {
				t.Fatalf("normalOrigin(%q) = %q keeps more than a host", origin, n)
			}
		}
		r := httptest.NewRequest(http.MethodGet, "http://app.test/", nil)
		r.Host = host
		r.Header.Set("Origin", origin)
		if !o.allow(r) {
			return
		}
		if !ok {
			t.Fatalf("origin %q passed without being an origin", origin)
		}
		hostPart := n[strings.Index(n, "://")+3:]
		_, listed := o.allowed[n]
		if hostPart != strings.ToLower(host) && !listed {
			t.Fatalf("origin %q (%q) passed for host %q", origin, n, host)
		}
	})
}

// FuzzPeerAddr: the address a rate limit counts never panics, and unless
// the proxy is trusted it does not depend on X-Forwarded-For, so a client
// cannot choose its own bucket; trusted, a forwarded address is an IP.
func FuzzPeerAddr(f *testing.F) {
	for _, s := range [][2]string{
		{"10.0.0.1:1234", ""}, {"10.0.0.1:1234", "1.2.3.4"}, {"[::ffff:10.0.0.1]:80", "::ffff:1.2.3.4, 5.6.7.8"},
		{"garbage", "not an ip"}, {"", ","}, {"10.0.0.1", "1.2.3.4,"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, remote, xff string) {
		r := httptest.NewRequest(http.MethodGet, "http://app.test/", nil)
		r.RemoteAddr = remote
		plain := PeerAddr(r, false)
		r.Header.Set("X-Forwarded-For", xff)
		if got := PeerAddr(r, false); got != plain {
			t.Fatalf("untrusted X-Forwarded-For %q moved the address from %q to %q", xff, plain, got)
		}
		trusted := PeerAddr(r, true)
		if trusted != plain {
			if _, err := netip.ParseAddr(trusted); err != nil {
				t.Fatalf("trusted X-Forwarded-For %q gave %q, not an IP", xff, trusted)
			}
		}
	})
}
