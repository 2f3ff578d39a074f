package admission

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// clock is an injected Config.Now that moves only when told to.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// handshake is a request as a browser on http://app.test would send it.
func handshake(addr, origin string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "http://app.test/", nil)
	r.RemoteAddr = addr
	r.Header.Set("Connection", "Upgrade")
	r.Header.Set("Upgrade", "websocket")
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	return r
}

// admit runs g.Admit and returns what it wrote.
func admit(t *testing.T, g *Gate, r *http.Request) (Identity, bool, *http.Response, string) {
	t.Helper()
	w := httptest.NewRecorder()
	id, ok := g.Admit(w, r)
	res := w.Result()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return id, ok, res, string(b)
}

// wantRefused checks a refusal's status, content type and exact body.
func wantRefused(t *testing.T, ok bool, res *http.Response, body string, status int, wantBody string) {
	t.Helper()
	if ok {
		t.Fatalf("admitted, want %d", status)
	}
	if res.StatusCode != status {
		t.Fatalf("status %d, want %d (body %s)", res.StatusCode, status, body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	if body != wantBody {
		t.Fatalf("body\n got %s\nwant %s", body, wantBody)
	}
}

const (
	bodyLimit          = `{"reasons":[{"code":"limit","message":"too many requests from this address; retry later"}]}`
	bodyOrigin         = `{"reasons":[{"code":"origin","message":"this origin may not connect"}]}`
	bodyHost           = `{"reasons":[{"code":"host","message":"this host name may not be used to reach the gateway"}]}`
	bodyIdentifyFailed = `{"reasons":[{"code":"identify-failed","message":"the peer could not be identified"}]}`
)
