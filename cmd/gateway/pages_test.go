package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// code is the status of GET path on h.
func code(t *testing.T, h *http.ServeMux, path string) int {
	t.Helper()
	if h == nil {
		return 0
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code
}

func TestPagesWhereTheyMayBe(t *testing.T) {
	for _, c := range []struct {
		name                       string
		args                       []string
		demo, inspectWS, inspectAd int
	}{
		{"loopback: both, for a newcomer", nil, 200, 200, 0},
		{"public: neither", []string{"-ws-addr", "0.0.0.0:8080"}, 404, 404, 0},
		{"public with -demo on", []string{"-ws-addr", "0.0.0.0:8080", "-demo", "on"}, 200, 404, 0},
		{"loopback with -demo off", []string{"-demo", "off"}, 404, 200, 0},
		{"admin listener takes the inspector", []string{"-ws-addr", "0.0.0.0:8080", "-admin-addr", "127.0.0.1:0"}, 404, 404, 200},
		{"-inspect=false", []string{"-admin-addr", "127.0.0.1:0", "-inspect=false"}, 200, 404, 404},
	} {
		t.Run(c.name, func(t *testing.T) {
			ta := newTestApp(t, c.args...)
			ws, admin := ta.handlers()
			if got := code(t, ws, "/demo/"); got != c.demo {
				t.Errorf("/demo/ on the WebSocket listener: %d, want %d", got, c.demo)
			}
			if got := code(t, ws, "/inspect/"); got != c.inspectWS {
				t.Errorf("/inspect/ on the WebSocket listener: %d, want %d", got, c.inspectWS)
			}
			if got := code(t, admin, "/inspect/"); got != c.inspectAd {
				t.Errorf("/inspect/ on the admin listener: %d, want %d", got, c.inspectAd)
			}
		})
	}
}

func TestPagesServeTheModuleWithTheirHeaders(t *testing.T) {
	ta := newTestApp(t)
	ws, _ := ta.handlers()
	for _, path := range []string{"/demo/aweft/index.js", "/inspect/aweft/link.js", "/demo/app.js"} {
		rec := httptest.NewRecorder()
		ws.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/javascript; charset=utf-8" {
			t.Errorf("%s: %d %q", path, rec.Code, rec.Header().Get("Content-Type"))
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
	}
	if got := code(t, ws, "/demo/aweft/test/fixtures.test.js"); got != 404 {
		t.Errorf("the module's tests are served: %d", got)
	}
}

func TestPageSettingsRefused(t *testing.T) {
	for _, args := range [][]string{{"-demo", "maybe"}, {"-ws-paths", "/ws,/demo"}, {"-ws-paths", "/inspect/ws"}} {
		if _, _, err := parseAndValidate(args, nil); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
