package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestParseGauges(t *testing.T) {
	page := `# HELP process_resident_memory_bytes Resident memory size in bytes.
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 1.2345e+07
go_memstats_heap_inuse_bytes 4.5e+06
weftgate_connections_open 10000
process_cpu_seconds_total 12.5
weftgate_commits_refused_total{reason="x"} 3
`
	g, err := parseGauges(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	if g.RSS != 12345000 || g.Heap != 4.5e6 || g.Links != 10000 || g.CPU != 12.5 || !g.hasCPU {
		t.Fatalf("%+v", g)
	}
	if _, err := parseGauges(strings.NewReader("up 1\n")); err == nil {
		t.Error("a page without the gauges was read")
	}
	if _, err := parseGauges(strings.NewReader("weftgate_connections_open many\n")); err == nil {
		t.Error("a bad number was read")
	}
}

func TestMetricsURL(t *testing.T) {
	for in, want := range map[string]string{
		"ws://127.0.0.1:8080/":     "http://127.0.0.1:8080/metrics",
		"wss://localhost:9/ws?x=1": "https://localhost:9/metrics",
	} {
		if got, err := metricsURL(in); err != nil || got != want {
			t.Errorf("%s: %s %v, want %s", in, got, err, want)
		}
	}
}

// A metrics page that is not there (the gateway serves it on -admin-addr)
// is an HTTP status, named, not an unknown failure.
func TestScrapeNamesTheStatus(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	_, err := scrape(context.Background(), srv.URL+"/metrics")
	if got := kindOf(err); got != "http-404" {
		t.Fatalf("kind %q (%v), want http-404", got, err)
	}
}
