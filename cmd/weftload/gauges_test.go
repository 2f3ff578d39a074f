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
weftgate_log_conflicts_total 7
weftgate_log_catch_ups_total 9
`
	g, err := parseGauges(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	if g.RSS != 12345000 || g.Heap != 4.5e6 || g.Links != 10000 || g.CPU != 12.5 || !g.hasCPU ||
		len(g.perNode) != 1 || g.perNode[0] != (nodeGauges{links: 10000, conflicts: 7, catchUps: 9}) {
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

// Several nodes' pages are summed, each node's links and log counters
// kept in order; a page without CPU leaves the sum without it.
func TestScrapeAllSumsTheNodes(t *testing.T) {
	page := func(body string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(body)) }))
	}
	a := page("weftgate_connections_open 2\nprocess_cpu_seconds_total 1.5\ngo_memstats_heap_inuse_bytes 10\nweftgate_log_conflicts_total 4\n")
	defer a.Close()
	b := page("weftgate_connections_open 3\nprocess_cpu_seconds_total 2\ngo_memstats_heap_inuse_bytes 20\nweftgate_log_catch_ups_total 5\n")
	defer b.Close()
	g, err := scrapeAll(context.Background(), []string{a.URL, b.URL})
	if err != nil {
		t.Fatal(err)
	}
	want := []nodeGauges{{links: 2, conflicts: 4}, {links: 3, catchUps: 5}}
	if g.Links != 5 || g.CPU != 3.5 || g.Heap != 30 || !g.hasCPU || len(g.perNode) != 2 || g.perNode[0] != want[0] || g.perNode[1] != want[1] {
		t.Fatalf("%+v", g)
	}
	c := page("weftgate_connections_open 1\n")
	defer c.Close()
	if g, err := scrapeAll(context.Background(), []string{a.URL, c.URL}); err != nil || g.hasCPU || g.Links != 3 {
		t.Fatalf("%+v, %v", g, err)
	}
	if g, err := scrapeAll(context.Background(), nil); err != nil || g.hasCPU || g.Links != 0 || g.perNode != nil {
		t.Fatalf("no pages: %+v, %v", g, err)
	}
}
