package main

import (
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// Under OpenMetrics a counter's family name drops _total, so a counter
// x_total and any other family named x clash, and a scraper refuses the page.
// Only our own families: client_golang's Go collector has such a pair
// (go_memstats_alloc_bytes) that is not ours to rename.
func TestMetricNamesDoNotClashUnderOpenMetrics(t *testing.T) {
	ta := newTestApp(t)
	families, err := ta.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "weftgate_") {
			continue
		}
		if base, ok := strings.CutSuffix(f.GetName(), "_total"); ok && f.GetType() == dto.MetricType_COUNTER && names[base] {
			t.Errorf("the counter %s and the family %s share the OpenMetrics name %s", f.GetName(), base, base)
		}
	}
	if !names["weftgate_connections_open"] || !names["weftgate_connections_total"] {
		t.Errorf("want weftgate_connections_open and weftgate_connections_total, have %v", names)
	}
}

// Every reason the gateway counts is on the first scrape at 0, so a rate()
// or an alert on it has a series before the first event.
func TestMetricsSeedEveryKnownReason(t *testing.T) {
	ta := newTestApp(t)
	got := ta.scrape(t)
	for family, known := range map[string][]string{
		"weftgate_commits_refused_total":    knownRefusals,
		"weftgate_faults_total":             knownFaults,
		"weftgate_handshake_refusals_total": {"limit", "origin", "refused", "identify-failed"},
	} {
		for _, r := range known {
			key := family + "{reason=" + r + "}"
			if v, ok := got[key]; !ok || v != 0 {
				t.Errorf("%s = %v (present %t), want 0 on a fresh gateway", key, v, ok)
			}
		}
	}
	if len(knownRefusals) < 40 || len(knownFaults) < 5 {
		t.Errorf("%d refusal and %d fault reasons known; the lists lost some", len(knownRefusals), len(knownFaults))
	}
	// The status page's counters agree.
	st := ta.statusPage(t)
	if len(st.Counters.Refused) != len(knownRefusals) || st.Counters.Refused["read-only"] != 0 {
		t.Errorf("status refusals %v, want every known reason at 0", st.Counters.Refused)
	}
}
