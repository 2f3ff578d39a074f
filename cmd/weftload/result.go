package main

import (
	"fmt"
	"io"
	"sort"
	"time"
)

// result is what a run measured.
type result struct {
	Peers     int     `json:"peers"`
	Documents int     `json:"documents"`
	Writers   int     `json:"writers_per_document"`
	Readers   int     `json:"readers,omitempty"` // -shape fanout
	Shape     string  `json:"shape"`
	Size      int     `json:"size"`
	Rate      float64 `json:"rate_per_writer"`
	Authority bool    `json:"authority"`
	Store     string  `json:"store,omitempty"` // the in-process gateway's
	Seconds   float64 `json:"seconds"`

	Sent           int64   `json:"commits_sent"`
	Applied        int64   `json:"commits_applied"` // sent, less those refused
	Refused        int64   `json:"commits_refused"`
	Delivered      int64   `json:"deliveries"`
	Expected       int64   `json:"deliveries_expected"`
	CommitsPerS    float64 `json:"commits_per_second"`
	DeliveriesPerS float64 `json:"deliveries_per_second"`
	WindowWaits    int64   `json:"window_waits"`
	// Missing and Duplicates are deliveries that never came and commits
	// a member got twice or already had in its state: either fails a run.
	Missing    int64 `json:"deliveries_missing"`
	Duplicates int64 `json:"deliveries_duplicate"`

	P50ms  float64 `json:"latency_p50_ms"`
	P99ms  float64 `json:"latency_p99_ms"`
	P999ms float64 `json:"latency_p999_ms"`
	MaxMs  float64 `json:"latency_max_ms"`

	WindowSeconds float64  `json:"window_seconds"`
	Windows       []window `json:"windows"`

	// CPU from the first commit until the last delivery (or the drain's
	// end): the gateway's, and with -inprocess the tool's with it.
	CPUSeconds        float64 `json:"cpu_seconds,omitempty"`
	CPUIncludesTool   bool    `json:"cpu_includes_tool,omitempty"`
	DeliveriesPerCPUS float64 `json:"deliveries_per_cpu_second,omitempty"`
	// CommitsPerFrame is over what raw members received (0: none raw).
	CommitsPerFrame float64 `json:"commits_per_frame,omitempty"`

	ConnectSeconds float64 `json:"connect_seconds"`
	ConnectPerS    float64 `json:"connections_per_second"`

	// Nodes are the gateways in -url order (or the -inprocess ones), with
	// the members placed on each and each one's links once connected.
	Nodes             []node  `json:"nodes"`
	Gateway           *gauges `json:"gateway,omitempty"`
	HeapPerLinkB      float64 `json:"heap_per_link_bytes,omitempty"`
	RSSPerLinkB       float64 `json:"rss_per_link_bytes,omitempty"`
	HeapIncludesPeers bool    `json:"heap_includes_peers,omitempty"`

	Verdicts     int64   `json:"verdicts,omitempty"`
	VerdictsPerS float64 `json:"verdicts_per_second,omitempty"`

	Errors map[string]int64 `json:"errors"`
}

// window is the latency of the commits made in one window of the run.
type window struct {
	StartS     float64 `json:"start_seconds"`
	EndS       float64 `json:"end_seconds"`
	Deliveries int64   `json:"deliveries"`
	P50ms      float64 `json:"latency_p50_ms"`
	P99ms      float64 `json:"latency_p99_ms"`
	MaxMs      float64 `json:"latency_max_ms"`
}

// ok says every commit reached every member it should, once.
func (r *result) ok() bool { return r.Missing == 0 && r.Duplicates == 0 }

func (r *result) fill(s *stats, want int64) {
	r.Missing, r.Duplicates = s.tally(want)
	for i := range s.windows {
		h := &s.windows[i]
		if float64(i)*float64(s.winLen) >= r.Seconds*1e9 {
			break // a run cut short leaves the rest empty
		}
		end := time.Duration(r.Seconds * float64(time.Second))
		if i < len(s.windows)-1 {
			// The last window takes commits made past the duration too.
			end = min(end, time.Duration(i+1)*time.Duration(s.winLen))
		}
		r.Windows = append(r.Windows, window{StartS: (time.Duration(i) * time.Duration(s.winLen)).Seconds(), EndS: end.Seconds(),
			Deliveries: int64(h.count()), P50ms: ms(h.quantile(0.50)), P99ms: ms(h.quantile(0.99)), MaxMs: ms(h.maxValue())})
	}
	if r.CPUSeconds > 0 {
		r.DeliveriesPerCPUS = float64(s.delivered.Load()) / r.CPUSeconds
	}
	if f := s.frames.Load(); f > 0 {
		r.CommitsPerFrame = float64(s.framed.Load()) / float64(f)
	}
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
	if r.Store != "" {
		fmt.Fprintf(w, "%d in-process gateway(s) on the %s store\n", max(1, len(r.Nodes)), r.Store)
	}
	row := func(k string, format string, v ...any) {
		fmt.Fprintf(w, "%-26s "+format+"\n", append([]any{k}, v...)...)
	}
	row("commits sent", "%d (%.0f/s)", r.Sent, r.CommitsPerS)
	row("commits applied", "%d", r.Applied)
	row("commits refused", "%d", r.Refused)
	row("deliveries", "%d of %d expected", r.Delivered, r.Expected)
	verdict := "every commit reached every member once"
	if !r.ok() {
		verdict = "FAILED"
	}
	row("missing, duplicate", "%d, %d: %s", r.Missing, r.Duplicates, verdict)
	row("deliveries per second", "%.0f", r.DeliveriesPerS)
	if r.CPUSeconds > 0 {
		who := "the gateway's"
		if r.CPUIncludesTool {
			who = "gateway and tool together"
		}
		row("deliveries per CPU-second", "%.0f (%.2f CPU-s, %s)", r.DeliveriesPerCPUS, r.CPUSeconds, who)
	}
	if r.CommitsPerFrame > 0 {
		row("commits per frame", "%.2f (as raw members saw them)", r.CommitsPerFrame)
	}
	row("latency ms", "p50 %.2f  p99 %.2f  p99.9 %.2f  max %.2f", r.P50ms, r.P99ms, r.P999ms, r.MaxMs)
	for _, x := range r.Windows {
		row(fmt.Sprintf("  made %.1f-%.1f s", x.StartS, x.EndS), "p50 %.2f  p99 %.2f  max %.2f  (%d deliveries)", x.P50ms, x.P99ms, x.MaxMs, x.Deliveries)
	}
	row("window waits", "%d", r.WindowWaits)
	row("connections per second", "%.0f (%d in %.1f s)", r.ConnectPerS, r.Peers, r.ConnectSeconds)
	if len(r.Nodes) > 1 {
		for _, n := range r.Nodes {
			links := "?"
			if n.Links >= 0 {
				links = fmt.Sprintf("%.0f", n.Links)
			}
			row("  node "+n.URL, "%s links (%d writers, %d readers placed), %.0f log conflicts, %.0f catch-ups", links, n.Writers, n.Readers, n.Conflicts, n.CatchUps)
		}
	}
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
