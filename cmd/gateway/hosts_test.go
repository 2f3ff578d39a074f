package main

import (
	"bufio"
	"bytes"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a log destination the handler and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// handshakeAs sends a WebSocket upgrade over a raw TCP connection to addr
// naming host as its Host and its page's origin, as a browser on
// http://host would, and returns the response's status and body.
func handshakeAs(t *testing.T, addr, host string) (int, string) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET / HTTP/1.1\r\nHost: " + host + "\r\nOrigin: http://" + host + "\r\n" +
		"Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
	if _, err := nc.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body bytes.Buffer
	if res.StatusCode != http.StatusSwitchingProtocols {
		body.ReadFrom(res.Body)
	}
	return res.StatusCode, body.String()
}

// DNS rebinding: a page on a name the attacker resolves to 127.0.0.1 names
// itself as Host and as Origin. A loopback gateway (the default -ws-addr)
// admits only loopback names and -allowed-hosts.
func TestLoopbackGatewayRefusesForeignHostNames(t *testing.T) {
	var logs lockedBuffer
	ta := newTestAppLog(t, slog.New(slog.NewTextHandler(&logs, nil)), "-allowed-hosts", "app.example")
	addr := ta.srv.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)

	code, body := handshakeAs(t, addr, "evil.example:"+port)
	if code != http.StatusForbidden || !strings.Contains(body, `"code":"host"`) {
		t.Fatalf("rebound name: %d %s, want 403 host", code, body)
	}
	if l := logs.String(); !strings.Contains(l, "level=INFO") || !strings.Contains(l, "reason=host") || !strings.Contains(l, "host=evil.example:"+port) {
		t.Fatalf("the refusal is not logged at INFO with its host:\n%s", l)
	}
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "app.example:" + port} {
		if code, body := handshakeAs(t, addr, host); code != http.StatusSwitchingProtocols {
			t.Errorf("%s: %d %s, want 101", host, code, body)
		}
	}
	if got := ta.scrape(t)["weftgate_handshake_refusals_total{reason=host}"]; got != 1 {
		t.Errorf("host refusals %v, want 1", got)
	}
}

// The operator routes on a loopback listener keep the same rule: a page on
// a rebound name could otherwise read /status and /metrics.
func TestLoopbackOperatorRoutesRefuseForeignHostNames(t *testing.T) {
	ta := newTestApp(t, "-allowed-hosts", "app.example")
	_, port, _ := net.SplitHostPort(ta.srv.Listener.Addr().String())
	for host, want := range map[string]int{
		"evil.example:" + port: http.StatusForbidden,
		"localhost:" + port:    http.StatusOK,
		"app.example:" + port:  http.StatusOK,
	} {
		for _, path := range []string{"/status", "/metrics", "/healthz"} {
			req, err := http.NewRequest(http.MethodGet, ta.srv.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = host
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body bytes.Buffer
			body.ReadFrom(res.Body)
			res.Body.Close()
			if res.StatusCode != want || want == http.StatusForbidden && !strings.Contains(body.String(), `"code":"host"`) {
				t.Errorf("GET %s as %s: %d %s, want %d", path, host, res.StatusCode, body.String(), want)
			}
		}
	}
}

// The rule guards loopback listeners only: on every interface, names are
// the operator's to choose, and the Origin rule still holds.
func TestHostRuleOnlyOnLoopback(t *testing.T) {
	ta := newTestApp(t, "-ws-addr", "0.0.0.0:0")
	addr := ta.srv.Listener.Addr().String()
	if code, body := handshakeAs(t, addr, "app.example"); code != http.StatusSwitchingProtocols {
		t.Fatalf("%d %s, want 101", code, body)
	}
}

func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.1.2.3:0": true, "[::1]:8080": true, "localhost:8080": true,
		":8080": false, "0.0.0.0:8080": false, "[::]:8080": false, "192.0.2.1:8080": false, "gw.example:80": false,
	} {
		if got := loopbackAddr(addr); got != want {
			t.Errorf("loopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}
