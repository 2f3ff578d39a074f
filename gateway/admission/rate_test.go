package admission

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestDefaultRateLimit(t *testing.T) {
	clk := newClock()
	g := New(Config{Now: clk.Now})
	for i := 0; i < DefaultLimit; i++ {
		if _, ok, res, body := admit(t, g, handshake("192.0.2.1:1", "")); !ok {
			t.Fatalf("request %d refused: %d %s", i+1, res.StatusCode, body)
		}
	}
	_, ok, res, body := admit(t, g, handshake("192.0.2.1:2", ""))
	wantRefused(t, ok, res, body, 429, bodyLimit)
	if ra := res.Header.Get("Retry-After"); ra != "1" {
		t.Fatalf("Retry-After %q, want 1 (one token is 100 ms away)", ra)
	}
	// Another address has its own allowance.
	if _, ok, _, _ := admit(t, g, handshake("192.0.2.2:1", "")); !ok {
		t.Fatal("another address was refused")
	}
	// A whole window later the allowance is full again.
	clk.Advance(DefaultWindow)
	for i := 0; i < DefaultLimit; i++ {
		if _, ok, _, _ := admit(t, g, handshake("192.0.2.1:1", "")); !ok {
			t.Fatalf("after the window, request %d refused", i+1)
		}
	}
	if _, ok, _, _ := admit(t, g, handshake("192.0.2.1:1", "")); ok {
		t.Fatal("admitted past the limit after the reset")
	}
}

func TestRateRefillAndRetryAfter(t *testing.T) {
	clk := newClock()
	g := New(Config{Limit: 2, Window: 20 * time.Second, Now: clk.Now})
	addr := "198.51.100.7"
	for i := 0; i < 2; i++ {
		if ref := g.Rate(addr); ref != nil {
			t.Fatalf("request %d refused", i+1)
		}
	}
	ref := g.Rate(addr)
	if ref == nil || ref.Status != 429 || ref.RetryAfter != 10*time.Second {
		t.Fatalf("refusal %+v, want 429 after 10s", ref)
	}
	w := httptest.NewRecorder()
	WriteRefusal(w, ref)
	if ra := w.Header().Get("Retry-After"); ra != "10" {
		t.Fatalf("Retry-After %q", ra)
	}
	clk.Advance(4 * time.Second)
	if ref := g.Rate(addr); ref == nil || ref.RetryAfter != 6*time.Second {
		t.Fatalf("4 s later: %+v, want a refusal with 6 s to wait", ref)
	}
	clk.Advance(6 * time.Second)
	if ref := g.Rate(addr); ref != nil {
		t.Fatal("one token should have refilled")
	}
	if ref := g.Rate(addr); ref == nil {
		t.Fatal("only one token should have refilled")
	}
}

func TestRateLimitMiddlewareSharesTheBucket(t *testing.T) {
	clk := newClock()
	g := New(Config{Limit: 2, Now: clk.Now})
	served := 0
	h := g.RateLimit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++ }))
	r := httptest.NewRequest(http.MethodPost, "http://app.test/api/session", nil)
	r.RemoteAddr = "192.0.2.1:9"
	h.ServeHTTP(httptest.NewRecorder(), r)
	if _, ok, _, _ := admit(t, g, handshake("192.0.2.1:10", "")); !ok {
		t.Fatal("handshake refused")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if served != 1 || w.Code != 429 || w.Body.String() != bodyLimit {
		t.Fatalf("served %d, status %d body %s", served, w.Code, w.Body.String())
	}
}

func TestRateLimitOff(t *testing.T) {
	g := New(Config{Limit: -1})
	for i := 0; i < 2*DefaultLimit; i++ {
		if ref := g.Rate("192.0.2.1"); ref != nil {
			t.Fatalf("request %d refused with the limit off", i+1)
		}
	}
	if g.Tracked() != 0 {
		t.Fatal("tracking addresses with the limit off")
	}
}

func TestAddressTableStaysBounded(t *testing.T) {
	clk := newClock()
	const max = 100
	g := New(Config{Limit: 3, Window: time.Minute, MaxAddresses: max, Now: clk.Now})
	heavy := "203.0.113.1"
	for i := 0; i < 3; i++ {
		g.Rate(heavy)
	}
	for i := 0; i < 10000; i++ {
		g.Rate(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
		if n := g.Tracked(); n > max {
			t.Fatalf("tracking %d addresses, bound %d", n, max)
		}
		// The heavy address keeps being seen, so it is never the one forgotten.
		if i%(max/2) == 0 && g.Rate(heavy) == nil {
			t.Fatalf("at %d the heavy address got a fresh allowance", i)
		}
	}
	if g.Tracked() != max {
		t.Fatalf("tracking %d, want the table full at %d", g.Tracked(), max)
	}
	// Idle addresses are forgotten once a window has passed.
	clk.Advance(time.Minute)
	g.Rate(heavy)
	if n := g.Tracked(); n != 1 {
		t.Fatalf("after a window, tracking %d, want 1", n)
	}
}
