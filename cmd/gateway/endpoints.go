package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weftgate/weftgate/gateway/admission"
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
// listener was set: they would list every document to anyone), each behind
// guard.
func (a *app) operatorRoutes(mux *http.ServeMux, guard func(http.Handler) http.Handler, withStatus bool) {
	mux.Handle("GET /healthz", guard(http.HandlerFunc(a.healthz)))
	mux.Handle("GET /readyz", guard(http.HandlerFunc(a.readyz)))
	if !withStatus {
		return
	}
	mux.Handle("GET /metrics", guard(promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: maxScrapesInFlight,
	})))
	mux.Handle("GET /status", guard(http.HandlerFunc(a.status)))
}

// profileRoutes adds Go's profiles under /debug/pprof/ (-pprof, admin
// listener only), each behind guard.
func profileRoutes(mux *http.ServeMux, guard func(http.Handler) http.Handler) {
	mux.Handle("GET /debug/pprof/", guard(http.HandlerFunc(pprof.Index)))
	mux.Handle("GET /debug/pprof/cmdline", guard(http.HandlerFunc(pprof.Cmdline)))
	mux.Handle("GET /debug/pprof/profile", guard(http.HandlerFunc(pprof.Profile)))
	mux.Handle("GET /debug/pprof/symbol", guard(http.HandlerFunc(pprof.Symbol)))
	mux.Handle("GET /debug/pprof/trace", guard(http.HandlerFunc(pprof.Trace)))
}

// hostRule is the WebSocket handshake's Host rule for the operator routes
// of the listener on addr: on loopback, a page on a rebound name could
// otherwise read /status (document names) and /metrics.
func (a *app) hostRule(addr string) func(http.Handler) http.Handler {
	g := admission.New(admission.Config{Limit: -1, LoopbackHosts: loopbackAddr(addr), AllowedHosts: a.cfg.AllowedHosts})
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ref := g.Host(r); ref != nil {
				admission.WriteRefusal(w, ref)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
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
