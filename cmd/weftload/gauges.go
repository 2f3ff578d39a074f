package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/weftgate/weftgate/gateway"
)

// Gauges read from the gateway's /metrics (cmd/gateway serves it on the
// WebSocket listener unless -admin-addr moves it).
const (
	metricRSS   = "process_resident_memory_bytes"
	metricHeap  = "go_memstats_heap_inuse_bytes"
	metricConns = "weftgate_connections_open"
	metricCPU   = "process_cpu_seconds_total"
	// On a shared log: appends that lost a race with another node, and
	// catch-up reads (a hot document written from several nodes).
	metricConflicts = "weftgate_log_conflicts_total"
	metricCatchUps  = "weftgate_log_catch_ups_total"
	// maxMetricsBytes bounds one scrape read.
	maxMetricsBytes = 8 << 20
	// scrapeTimeout bounds one scrape.
	scrapeTimeout = 5 * time.Second
)

// gauges are the gateway's memory and links at one moment.
type gauges struct {
	RSS   float64 `json:"rss_bytes"`
	Heap  float64 `json:"heap_inuse_bytes"`
	Links float64 `json:"links"`
	// CPU is the gateway process's CPU time so far, user and system.
	CPU    float64 `json:"cpu_seconds"`
	hasCPU bool    // the page had it (every page, summing several)
	// perNode is each node's, in -url order (result.Nodes).
	perNode []nodeGauges
}

// nodeGauges are one node's links and shared-log counters.
type nodeGauges struct{ links, conflicts, catchUps float64 }

// scrapeAll sums the gauges of several gateways' pages, keeping each
// one's links; no pages give zero gauges.
func scrapeAll(ctx context.Context, pages []string) (gauges, error) {
	sum := gauges{hasCPU: len(pages) > 0}
	for _, at := range pages {
		g, err := scrape(ctx, at)
		if err != nil {
			return sum, err
		}
		sum.RSS += g.RSS
		sum.Heap += g.Heap
		sum.Links += g.Links
		sum.CPU += g.CPU
		sum.hasCPU = sum.hasCPU && g.hasCPU
		sum.perNode = append(sum.perNode, g.perNode...)
	}
	return sum, nil
}

// metricsURL is where a gateway at the WebSocket url ws serves /metrics.
func metricsURL(ws string) (string, error) {
	u, err := url.Parse(ws)
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	}
	u.Path, u.RawQuery = "/metrics", ""
	return u.String(), nil
}

// scrape reads the gauges from a Prometheus text page.
func scrape(ctx context.Context, at string) (gauges, error) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, at, nil)
	if err != nil {
		return gauges{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return gauges{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return gauges{}, &statusError{url: at, code: resp.StatusCode}
	}
	return parseGauges(io.LimitReader(resp.Body, maxMetricsBytes))
}

// statusError is a metrics page that did not answer 200: with -admin-addr
// the page is not beside -url, and -metrics must name it.
type statusError struct {
	url  string
	code int
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d (%s)", e.url, e.code, http.StatusText(e.code))
}

func parseGauges(r io.Reader) (gauges, error) {
	var g gauges
	var conflicts, catchUps float64
	found := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		var dst *float64
		switch name {
		case metricRSS:
			dst = &g.RSS
		case metricHeap:
			dst = &g.Heap
		case metricConns:
			dst = &g.Links
		case metricCPU:
			dst, g.hasCPU = &g.CPU, true
		case metricConflicts:
			dst = &conflicts
		case metricCatchUps:
			dst = &catchUps
		default:
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return g, fmt.Errorf("%s: %w", name, err)
		}
		*dst = f
		found++
	}
	if err := sc.Err(); err != nil {
		return g, err
	}
	g.perNode = []nodeGauges{{links: g.Links, conflicts: conflicts, catchUps: catchUps}}
	if found == 0 {
		return g, fmt.Errorf("none of %s, %s, %s, %s on the page", metricRSS, metricHeap, metricConns, metricCPU)
	}
	return g, nil
}

// inProcessGauges reads this process's heap after a collection, and the
// gateways' link counts. RSS is the process's, peers included. Heap is the
// live heap: in-use spans also hold what earlier runs in the process left
// free, and a collection that returns those between the two readings made
// a small run's heap seem to shrink.
func inProcessGauges(ss []*gateway.Server) gauges {
	cpu := processCPU() // before the collection, which is this tool's cost
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	g := gauges{RSS: float64(m.Sys - m.HeapReleased), Heap: float64(m.HeapAlloc), CPU: cpu, hasCPU: true}
	for _, s := range ss {
		m := s.Metrics()
		n := nodeGauges{links: float64(m.Connections.Load()), conflicts: float64(m.Conflicts.Load()), catchUps: float64(m.CatchUps.Load())}
		g.Links += n.links
		g.perNode = append(g.perNode, n)
	}
	return g
}

// processCPU is this process's CPU time so far, user and system, in
// seconds (0 if the system will not say).
func processCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
