package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// benchDocuments and benchLinks size the gateway a scrape walks: every
// document hub answers each scrape, so this is the cost that grows.
const (
	benchDocuments = 200
	benchLinks     = 10
)

func loadedApp(b *testing.B) *testApp {
	ta := newTestApp(b)
	ctx := testCtx(b)
	for l := range benchLinks {
		p := dialPeer(b, ctx, ta.srv.URL)
		for d := range benchDocuments / benchLinks {
			name := fmt.Sprintf("doc-%d-%d", l, d)
			p.send(frame.Frame{Kind: frame.Open, Topic: uint64(d + 1), Name: name, Root: &frame.Root{ID: commit.NewID(), Kind: commit.Object}})
			p.expect(frame.Open)
			p.send(frame.Frame{Kind: frame.State, Topic: uint64(d + 1)})
		}
	}
	if n := len(ta.gw.Status(ctx).Documents); n != benchDocuments {
		b.Fatalf("%d documents open, want %d", n, benchDocuments)
	}
	return ta
}

// BenchmarkScrape is one /metrics scrape of a gateway holding
// benchDocuments documents over benchLinks links.
func BenchmarkScrape(b *testing.B) {
	ta := loadedApp(b)
	h := ta.srv.Config.Handler
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("/metrics: %d", rec.Code)
		}
	}
}

// BenchmarkStatusPage is one /status of the same gateway.
func BenchmarkStatusPage(b *testing.B) {
	ta := loadedApp(b)
	h := ta.srv.Config.Handler
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/status", nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("/status: %d", rec.Code)
		}
	}
}
