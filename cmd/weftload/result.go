package main

import (
	"fmt"
	"io"
	"sort"
)

// result is what a run measured.
type result struct {
	Peers     int     `json:"peers"`
	Documents int     `json:"documents"`
	Writers   int     `json:"writers_per_document"`
	Shape     string  `json:"shape"`
	Size      int     `json:"size"`
	Rate      float64 `json:"rate_per_writer"`
	Authority bool    `json:"authority"`
	Seconds   float64 `json:"seconds"`

	Sent           int64   `json:"commits_sent"`
	Applied        int64   `json:"commits_applied"` // sent, less those refused
	Refused        int64   `json:"commits_refused"`
	Delivered      int64   `json:"deliveries"`
	Expected       int64   `json:"deliveries_expected"`
	CommitsPerS    float64 `json:"commits_per_second"`
	DeliveriesPerS float64 `json:"deliveries_per_second"`
	WindowWaits    int64   `json:"window_waits"`

	P50ms  float64 `json:"latency_p50_ms"`
	P99ms  float64 `json:"latency_p99_ms"`
	P999ms float64 `json:"latency_p999_ms"`
	MaxMs  float64 `json:"latency_max_ms"`

	ConnectSeconds float64 `json:"connect_seconds"`
	ConnectPerS    float64 `json:"connections_per_second"`

	Gateway           *gauges `json:"gateway,omitempty"`
	HeapPerLinkB      float64 `json:"heap_per_link_bytes,omitempty"`
	RSSPerLinkB       float64 `json:"rss_per_link_bytes,omitempty"`
	HeapIncludesPeers bool    `json:"heap_includes_peers,omitempty"`

	Verdicts     int64   `json:"verdicts,omitempty"`
	VerdictsPerS float64 `json:"verdicts_per_second,omitempty"`

	Errors map[string]int64 `json:"errors"`
}

func (r *result) fill(s *stats, want int64) {
	r.Sent, r.Refused, r.Delivered, r.Expected = s.sent.Load(), s.refused.Load(), s.delivered.Load(), want
	r.Applied = r.Sent - r.Refused
	r.CommitsPerS = float64(r.Sent) / r.Seconds
	r.DeliveriesPerS = float64(r.Delivered) / r.Seconds
	r.WindowWaits = s.waits.Load()
	r.P50ms, r.P99ms, r.P999ms, r.MaxMs = ms(s.lat.quantile(0.50)), ms(s.lat.quantile(0.99)), ms(s.lat.quantile(0.999)), ms(s.lat.maxValue())
	r.Errors = s.errorsCopy()
}

func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "peers %d, documents %d, writers per document %d, shape %s (%d B), rate %g/s per writer, authority %v, %.1f s\n",
		r.Peers, r.Documents, r.Writers, r.Shape, r.Size, r.Rate, r.Authority, r.Seconds)
	row := func(k string, format string, v ...any) {
		fmt.Fprintf(w, "%-26s "+format+"\n", append([]any{k}, v...)...)
	}
	row("commits sent", "%d (%.0f/s)", r.Sent, r.CommitsPerS)
	row("commits applied", "%d", r.Applied)
	row("commits refused", "%d", r.Refused)
	row("deliveries", "%d of %d expected", r.Delivered, r.Expected)
	row("deliveries per second", "%.0f", r.DeliveriesPerS)
	row("latency ms", "p50 %.2f  p99 %.2f  p99.9 %.2f  max %.2f", r.P50ms, r.P99ms, r.P999ms, r.MaxMs)
	row("window waits", "%d", r.WindowWaits)
	row("connections per second", "%.0f (%d in %.1f s)", r.ConnectPerS, r.Peers, r.ConnectSeconds)
	if r.Gateway != nil {
		row("gateway links", "%.0f", r.Gateway.Links)
		row("gateway heap, RSS", "%.1f MiB, %.1f MiB", r.Gateway.Heap/(1<<20), r.Gateway.RSS/(1<<20))
	}
	if r.HeapPerLinkB != 0 {
		who := "the gateway's"
		if r.HeapIncludesPeers {
			who = "gateway and peers together"
		}
		row("heap, RSS per link", "%.0f B, %.0f B (%s)", r.HeapPerLinkB, r.RSSPerLinkB, who)
	}
	if r.Authority {
		row("verdicts", "%d (%.0f/s)", r.Verdicts, r.VerdictsPerS)
	}
	kinds := make([]string, 0, len(r.Errors))
	for k := range r.Errors {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		row("error "+k, "%d", r.Errors[k])
	}
}
