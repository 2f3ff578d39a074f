package main

import (
	"io/fs"
	"net"
	"net/http"
	"strings"

	"github.com/weftgate/weftgate/web"
)

// The pages served to browsers (package web): the demo board and the
// inspector, each with the aweft module under its own path (/demo/aweft/).
const (
	demoAuto = "auto"
	demoOn   = "on"
	demoOff  = "off"
)

// pagePaths are the pages' URL prefixes; no WebSocket path may take one.
var pagePaths = []string{"/demo", "/inspect"}

// loopback says whether addr's host is this machine only: a page served
// there is reachable by local users alone.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// demoServed: on when asked, or by default when the WebSocket listener is
// loopback (so `go run ./cmd/gateway` and a browser are all a newcomer needs).
func (s *settings) demoServed() bool {
	return s.Demo == demoOn || (s.Demo == demoAuto && loopback(s.WSAddr))
}

// inspectWhere is where the inspector goes: the admin listener when there
// is one, else the WebSocket listener only when it is loopback. The admin
// listener has no credentials of its own, so a public WebSocket listener
// never serves it (decision 022).
func (s *settings) inspectWhere() (onAdmin, onWS bool) {
	if !s.Inspect {
		return false, false
	}
	if s.AdminAddr != "" {
		return true, false
	}
	return false, loopback(s.WSAddr)
}

// pageRoutes adds the pages to the listeners that serve them.
func (a *app) pageRoutes(ws, admin *http.ServeMux) {
	files := web.Files()
	module, _ := fs.Sub(files, "aweft")
	serve := func(mux *http.ServeMux, dir string) {
		page, _ := fs.Sub(files, dir)
		mux.Handle("GET /"+dir+"/", pageHeaders(http.StripPrefix("/"+dir, http.FileServerFS(page))))
		mux.Handle("GET /"+dir+"/aweft/", pageHeaders(http.StripPrefix("/"+dir+"/aweft", http.FileServerFS(module))))
		mux.Handle("GET /"+dir, http.RedirectHandler("/"+dir+"/", http.StatusFound))
	}
	if a.cfg.demoServed() {
		serve(ws, "demo")
	}
	onAdmin, onWS := a.cfg.inspectWhere()
	mux := ws
	if onAdmin {
		mux = admin
	}
	if onAdmin || onWS {
		addr := a.cfg.WSAddr
		if onAdmin {
			addr = a.cfg.AdminAddr
		}
		// The inspector shows document content: on a loopback listener it
		// answers loopback names only, as the other operator endpoints do
		// (a rebound name must not read it).
		guard := a.hostRule(addr)
		inspect := http.NewServeMux()
		serve(inspect, "inspect")
		// The inspector's peer: the aweft WebSocket on the page's own
		// listener, so its Origin is the page's and no CORS is needed.
		inspect.Handle("GET /inspect/ws", a.linkAt(a.cfg.WSPaths[0]))
		inspect.HandleFunc("GET /inspect/commits", a.inspectCommits)
		mux.Handle("/inspect", guard(inspect))
		mux.Handle("/inspect/", guard(inspect))
	} else if a.cfg.Inspect {
		a.log.Info("inspector not served: it needs -admin-addr, or a loopback -ws-addr", "ws", a.cfg.WSAddr)
	}
}

// linkAt hands a request to the gateway's WebSocket as if made on path.
func (a *app) linkAt(path string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.URL.Path = path
		a.gw.ServeHTTP(w, r2)
	})
}

// pageHeaders keeps the pages to their own origin: scripts, styles and
// connections from it only, never framed.
func pageHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Cache-Control", "no-cache")
		if strings.HasSuffix(r.URL.Path, ".js") {
			hd.Set("Content-Type", "text/javascript; charset=utf-8")
		}
		h.ServeHTTP(w, r)
	})
}
