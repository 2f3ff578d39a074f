package admission

import (
	"net/netip"
	"strings"
	"testing"
)

func TestHostRule(t *testing.T) {
	cases := []struct {
		name string
		on   bool
		list []string
		host string
		ok   bool
	}{
		{"off admits any name", false, nil, "evil.example:8080", true},
		{"localhost", true, nil, "localhost", true},
		{"localhost with port", true, nil, "localhost:8080", true},
		{"localhost in capitals", true, nil, "LocalHost:8080", true},
		{"127.0.0.1", true, nil, "127.0.0.1:8080", true},
		{"elsewhere in 127/8", true, nil, "127.3.2.1", true},
		{"ipv6 loopback", true, nil, "[::1]:8080", true},
		{"ipv6 loopback without port", true, nil, "[::1]", true},
		{"rebound name", true, nil, "evil.example:8080", false},
		{"rebound name without port", true, nil, "evil.example", false},
		{"a name under localhost is not localhost", true, nil, "localhost.evil.example", false},
		{"a private address", true, nil, "192.168.1.2:8080", false},
		{"unspecified address", true, nil, "0.0.0.0:8080", false},
		{"empty", true, nil, "", false},
		{"empty port", true, nil, "localhost:", false},
		{"allow-listed", true, []string{"App.Example"}, "app.example:9000", true},
		{"allow-listed address", true, []string{"[fd00::1]"}, "[fd00::1]:80", true},
		{"not on the list", true, []string{"app.example"}, "evil.example:9000", false},
		{"a bad entry never matches", true, []string{"app.example:80"}, "app.example:80", false},
		{"any", true, []string{"any"}, "evil.example", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := New(Config{LoopbackHosts: c.on, AllowedHosts: c.list})
			r := handshake("192.0.2.1:1", "")
			r.Host = c.host
			_, ok, res, body := admit(t, g, r)
			if c.ok {
				if !ok {
					t.Fatalf("refused: %d %s", res.StatusCode, body)
				}
				return
			}
			wantRefused(t, ok, res, body, 403, bodyHost)
			if got := g.Refusals()[ReasonHost]; got != 1 {
				t.Fatalf("host refusals %d, want 1", got)
			}
		})
	}
}

func TestValidateHosts(t *testing.T) {
	for _, ok := range [][]string{nil, {"any"}, {"app.example", "10.0.0.1", "[fd00::1]", "fd00::2"}} {
		if err := (Config{AllowedHosts: ok}).Validate(); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"app.example:80", "http://app.example", "", "a b", "10.0.0.1:80"} {
		err := (Config{AllowedHosts: []string{"app.example", bad}}).Validate()
		if ce, ok := err.(*ConfigError); !ok || ce.Field != "AllowedHosts" || ce.Value != bad {
			t.Errorf("%q: %v, want a ConfigError naming it", bad, err)
		}
	}
}

// FuzzHost: the Host rule never panics, and whatever passes names
// localhost, a loopback address or an allowed name, with nothing else but
// a port.
func FuzzHost(f *testing.F) {
	for _, s := range []string{"localhost:8080", "127.0.0.1", "[::1]:80", "evil.example:8080", "app.example",
		"localhost.evil.example", "[::1", "127.0.0.1:", "LOCALHOST", "[::ffff:127.0.0.1]:1", "app.example@evil"} {
		f.Add(s)
	}
	h := newHosts(true, []string{"app.example"})
	f.Fuzz(func(t *testing.T, host string) {
		r := handshake("192.0.2.1:1", "")
		r.Host = host
		if !h.allow(r) {
			return
		}
		name := hostName(host)
		rest, ok := strings.CutPrefix(strings.TrimPrefix(strings.ToLower(host), "["), name)
		if !ok || strings.ContainsAny(host, "@/?# \t") || rest != "" && rest != "]" && rest[0] != ':' && !strings.HasPrefix(rest, "]:") {
			t.Fatalf("Host %q passed as %q, which is not all of it but a port", host, name)
		}
		if name == "localhost" || name == "app.example" {
			return
		}
		if a, err := netip.ParseAddr(name); err == nil && a.IsLoopback() {
			return
		}
		t.Fatalf("Host %q passed as %q", host, name)
	})
}
