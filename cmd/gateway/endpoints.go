package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Limits of the operator endpoints.
const (
	// readyTimeout bounds the store's health answer for /readyz.
	readyTimeout = 2 * time.Second
	// maxScrapesInFlight bounds concurrent /metrics requests; more get 503.
	maxScrapesInFlight = 4
)

// operatorRoutes adds /healthz and /readyz to mux, and /metrics and /status
// unless withStatus is false (the WebSocket listener is public and no admin
// listener was set: they would list every document to anyone).
func (a *app) operatorRoutes(mux *http.ServeMux, withStatus bool) {
	mux.HandleFunc("GET /healthz", a.healthz)
	mux.HandleFunc("GET /readyz", a.readyz)
	if !withStatus {
		return
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: maxScrapesInFlight,
	}))
	mux.HandleFunc("GET /status", a.status)
}

// profileRoutes adds Go's profiles under /debug/pprof/ (-pprof, admin
// listener only).
func profileRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}

// healthz answers 200 while the process serves HTTP at all.
func (a *app) healthz(w http.ResponseWriter, _ *http.Request) {
	plain(w, http.StatusOK, "ok")
}

// readyz answers 200 when the store accepts writes and the gateway is not
// draining; a load balancer stops sending new peers on 503.
func (a *app) readyz(w http.ResponseWriter, r *http.Request) {
	if a.draining.Load() || a.gw.Draining() {
		plain(w, http.StatusServiceUnavailable, "draining")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := a.store.Healthy(ctx); err != nil {
		plain(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	plain(w, http.StatusOK, "ready")
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintln(w, msg)
}
