package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/admission"
)

// A request that is not a WebSocket upgrade (a load balancer's probe, a
// browser's GET) is answered 426 before the rate limit counts it and before
// the identifier is asked: a probe costs no backend round trip and no
// caller's budget.
func TestPlainGetIsAnswered426BeforeAdmission(t *testing.T) {
	ids := &sessions{tokens: map[string]string{"t": "ann"}}
	ts := startGateway(t, gateway.Config{Admission: admission.Config{Identifier: ids, Limit: 1, Window: time.Hour}})
	httpURL := "http" + strings.TrimPrefix(ts.url, "ws")
	for _, h := range []http.Header{
		{},
		{"Connection": {"keep-alive"}},
		{"Upgrade": {"websocket"}},  // no Connection: Upgrade
		{"Connection": {"Upgrade"}}, // no Upgrade: websocket
		{"Connection": {"Upgrade"}, "Upgrade": {"h2c"}},
	} {
		req, _ := http.NewRequestWithContext(ctxT(t), http.MethodGet, httpURL+"/", nil)
		for k, v := range h {
			req.Header[k] = v
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusUpgradeRequired || res.Header.Get("Upgrade") != "websocket" {
			t.Fatalf("%v: %d Upgrade=%q, want 426 Upgrade=websocket", h, res.StatusCode, res.Header.Get("Upgrade"))
		}
	}
	if n := ids.calls.Load(); n != 0 {
		t.Fatalf("the identifier was asked %d times for plain requests, want 0", n)
	}
	if n := ts.Status(ctxT(t)).Handshakes[admission.ReasonLimit]; n != 0 {
		t.Fatalf("%d requests refused by the rate limit, want 0", n)
	}
	// The one handshake the limit allows is still there for a real upgrade.
	c, _, err := websocket.Dial(ctxT(t), ts.url, &websocket.DialOptions{HTTPHeader: cookie("t")})
	if err != nil {
		t.Fatalf("the first upgrade after five probes: %v", err)
	}
	c.CloseNow()
	if n := ids.calls.Load(); n != 1 {
		t.Fatalf("the identifier was asked %d times, want 1", n)
	}
}

// Refused handshakes are logged at INFO with their status and reason, so an
// operator sees why peers are turned away without turning on debug logs.
func TestRefusedHandshakesAreLoggedAtInfo(t *testing.T) {
	var logs syncBuffer
	ts := startGateway(t, gateway.Config{
		Logger:    jsonLogger(&logs),
		Admission: admission.Config{Limit: 1, Window: time.Hour, AllowedOrigins: []string{"https://app.example"}},
	})
	bad := http.Header{"Origin": {"https://evil.example"}}
	if _, res, err := websocket.Dial(ctxT(t), ts.url, &websocket.DialOptions{HTTPHeader: bad}); err == nil || res.StatusCode != http.StatusForbidden {
		t.Fatalf("bad origin: %v, want 403", err)
	}
	if _, res, err := websocket.Dial(ctxT(t), ts.url, nil); err == nil || res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second handshake: %v, want 429", err)
	}
	want := map[float64]string{http.StatusForbidden: admission.ReasonOrigin, http.StatusTooManyRequests: admission.ReasonLimit}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] != "handshake refused" {
			continue
		}
		st, _ := rec["status"].(float64)
		if conn, _ := rec["conn"].(string); rec["level"] != "INFO" || rec["reason"] != want[st] || rec["addr"] == "" || !strings.HasPrefix(conn, "c") || conn == "c0" {
			t.Errorf("refusal logged as %s", line)
		}
		delete(want, st)
	}
	if len(want) > 0 {
		t.Fatalf("refusals not logged: %v\n%s", want, logs.String())
	}
}
