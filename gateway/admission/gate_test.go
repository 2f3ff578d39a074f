package admission

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"
)

func TestZeroConfigAdmitsAnonymous(t *testing.T) {
	g := New(Config{})
	id, ok, res, body := admit(t, g, handshake("192.0.2.1:5000", ""))
	if !ok {
		t.Fatalf("refused: %d %s", res.StatusCode, body)
	}
	if !id.Anonymous || id.ID != "" {
		t.Fatalf("identity %+v, want anonymous", id)
	}
	if body != "" || res.StatusCode != http.StatusOK {
		t.Fatalf("admit wrote %d %q; it must write nothing", res.StatusCode, body)
	}
}

func TestIdentifierRefusal(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		status int
		body   string
	}{
		{"default 401", &Refusal{Reasons: []Reason{{Code: "no-session", Message: "sign in first"}}},
			401, `{"reasons":[{"code":"no-session","message":"sign in first"}]}`},
		{"two reasons", &Refusal{Reasons: []Reason{{Code: "a", Message: "x"}, {Code: "b", Message: "y"}}},
			401, `{"reasons":[{"code":"a","message":"x"},{"code":"b","message":"y"}]}`},
		{"own 4xx status", &Refusal{Status: 403, Reasons: []Reason{{Code: "banned", Message: "go away"}}},
			403, `{"reasons":[{"code":"banned","message":"go away"}]}`},
		{"503 stays: the identifier cannot answer now", &Refusal{Status: 503, RetryAfter: time.Second, Reasons: []Reason{{Code: "authority-unavailable", Message: "retry"}}},
			503, `{"reasons":[{"code":"authority-unavailable","message":"retry"}]}`},
		{"non-4xx status becomes 401", &Refusal{Status: 200, Reasons: []Reason{{Code: "c", Message: "m"}}},
			401, `{"reasons":[{"code":"c","message":"m"}]}`},
		{"no reasons", &Refusal{},
			401, `{"reasons":[{"code":"refused","message":"the peer was refused"}]}`},
		{"wrapped", fmt.Errorf("checking: %w", &Refusal{Reasons: []Reason{{Code: "expired", Message: "the session expired"}}}),
			401, `{"reasons":[{"code":"expired","message":"the session expired"}]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var heard []string
			g := New(Config{
				Identifier: IdentifierFunc(func(context.Context, Peer) (Identity, error) { return Identity{ID: "u1"}, c.err }),
				OnRefuse:   func(r string) { heard = append(heard, r) },
			})
			_, ok, res, body := admit(t, g, handshake("192.0.2.1:1", ""))
			wantRefused(t, ok, res, body, c.status, c.body)
			if !reflect.DeepEqual(heard, []string{ReasonRefused}) {
				t.Fatalf("OnRefuse heard %v", heard)
			}
		})
	}
}

func TestIdentifierFailureIs500(t *testing.T) {
	cases := map[string]Identifier{
		"error": IdentifierFunc(func(context.Context, Peer) (Identity, error) {
			return Identity{}, errors.New("db down: password=hunter2")
		}),
		"panic": IdentifierFunc(func(context.Context, Peer) (Identity, error) { panic("boom") }),
		"nil refusal pointer": IdentifierFunc(func(context.Context, Peer) (Identity, error) {
			var r *Refusal
			return Identity{}, fmt.Errorf("odd: %w", r)
		}),
	}
	for name, idf := range cases {
		t.Run(name, func(t *testing.T) {
			g := New(Config{Identifier: idf})
			_, ok, res, body := admit(t, g, handshake("192.0.2.1:1", ""))
			wantRefused(t, ok, res, body, 500, bodyIdentifyFailed)
			if got := g.Refusals()[ReasonIdentifyFailed]; got != 1 {
				t.Fatalf("identify-failed count %d", got)
			}
		})
	}
}

func TestIdentifyTimeout(t *testing.T) {
	g := New(Config{
		IdentifyTimeout: 1, // a nanosecond: the deadline has passed when Identify looks
		Identifier: IdentifierFunc(func(ctx context.Context, _ Peer) (Identity, error) {
			<-ctx.Done()
			return Identity{}, ctx.Err()
		}),
	})
	_, ok, res, body := admit(t, g, handshake("192.0.2.1:1", ""))
	wantRefused(t, ok, res, body, 500, bodyIdentifyFailed)
}

func TestPeerGivenToIdentifier(t *testing.T) {
	var got Peer
	g := New(Config{Identifier: IdentifierFunc(func(_ context.Context, p Peer) (Identity, error) {
		got = p
		return Identity{ID: "u7", Roles: []string{"editor"}}, nil
	})})
	r := handshake("[::ffff:192.0.2.9]:443", "http://app.test")
	r.URL.RawQuery = "x=1"
	r.AddCookie(&http.Cookie{Name: "session", Value: ""})
	r.AddCookie(&http.Cookie{Name: "session", Value: "tok"})
	r.Header.Set("X-Forwarded-For", "203.0.113.5")
	id, ok, _, _ := admit(t, g, r)
	if !ok || id.ID != "u7" || !reflect.DeepEqual(id.Roles, []string{"editor"}) {
		t.Fatalf("admit %v %+v", ok, id)
	}
	if got.Addr != "192.0.2.9" {
		t.Fatalf("addr %q: X-Forwarded-For must be ignored without TrustProxy", got.Addr)
	}
	if len(got.Cookies) != 2 || got.Cookies[0].Value != "" || got.Cookies[1].Value != "tok" {
		t.Fatalf("cookies %v: want both session cookies in order", got.Cookies)
	}
	if got.URL.RawQuery != "x=1" || got.TLS || got.Header.Get("Origin") != "http://app.test" {
		t.Fatalf("peer %+v", got)
	}
	got.Header.Set("Origin", "changed")
	if r.Header.Get("Origin") != "http://app.test" {
		t.Fatal("peer header aliases the request's")
	}
}

func TestTrustProxy(t *testing.T) {
	var got Peer
	g := New(Config{TrustProxy: true, Identifier: IdentifierFunc(func(_ context.Context, p Peer) (Identity, error) {
		got = p
		return Identity{}, nil
	})})
	r := handshake("10.0.0.1:1", "")
	r.Header.Add("X-Forwarded-For", "6.6.6.6, 198.51.100.1")
	r.Header.Add("X-Forwarded-For", "198.51.100.2")
	r.Header.Set("X-Forwarded-Proto", "https")
	if _, ok, _, _ := admit(t, g, r); !ok {
		t.Fatal("refused")
	}
	if got.Addr != "198.51.100.2" || !got.TLS {
		t.Fatalf("addr %q tls %v: want the last forwarded entry and TLS", got.Addr, got.TLS)
	}
	r = handshake("10.0.0.1:1", "")
	r.Header.Set("X-Forwarded-For", "not-an-ip")
	admit(t, g, r)
	if got.Addr != "10.0.0.1" {
		t.Fatalf("addr %q: a malformed forwarded entry falls back to the socket's", got.Addr)
	}
}

func TestChecksRunInOrder(t *testing.T) {
	clk := newClock()
	called := 0
	g := New(Config{Limit: 1, Now: clk.Now, Identifier: IdentifierFunc(func(context.Context, Peer) (Identity, error) {
		called++
		return Identity{}, &Refusal{}
	})})
	// A bad origin is refused before identity, and still counts toward the rate.
	_, ok, res, body := admit(t, g, handshake("192.0.2.1:1", "http://evil.test"))
	wantRefused(t, ok, res, body, 403, bodyOrigin)
	_, ok, res, body = admit(t, g, handshake("192.0.2.1:1", "http://evil.test"))
	wantRefused(t, ok, res, body, 429, bodyLimit)
	if called != 0 {
		t.Fatalf("identifier called %d times for refused requests", called)
	}
	want := map[string]uint64{ReasonLimit: 1, ReasonHost: 0, ReasonOrigin: 1, ReasonRefused: 0, ReasonIdentifyFailed: 0}
	if got := g.Refusals(); !reflect.DeepEqual(got, want) {
		t.Fatalf("refusals %v, want %v", got, want)
	}
}

// A refused handshake over a real HTTP server is plain HTTP: no 101.
func TestRefusalIsNotUpgraded(t *testing.T) {
	g := New(Config{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := g.Admit(w, r); ok {
			w.WriteHeader(http.StatusSwitchingProtocols)
		}
	}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Origin", "https://elsewhere.test")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 403 || res.Header.Get("Upgrade") != "" {
		t.Fatalf("status %d upgrade %q", res.StatusCode, res.Header.Get("Upgrade"))
	}
}

func TestWriteRefusalOddInput(t *testing.T) {
	for _, ref := range []*Refusal{nil, {Status: 200}} {
		w := httptest.NewRecorder()
		WriteRefusal(w, ref)
		if w.Code != 403 || w.Body.String() != `{"reasons":[]}` || w.Header().Get("Retry-After") != "" {
			t.Fatalf("WriteRefusal(%+v): %d %s", ref, w.Code, w.Body.String())
		}
	}
	if got := (*Refusal)(nil).Error(); got != "admission: refused" {
		t.Fatal(got)
	}
}
