package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/weftgate/weftgate/protocol/commit"
)

func fanout(readers int) options {
	return options{inprocess: true, shape: shapeFanout, readers: readers, rate: 200, window: 16, dialers: 4,
		duration: 2 * time.Second, winLen: time.Second}
}

// checkFanout asserts what a fan-out run must show: every reader got every
// commit once, and 1-second windows that cover the run, each with a p99.
func checkFanout(t *testing.T, res *result, readers int) {
	t.Helper()
	// Not under test: in a process that ran other tests before, the heap
	// may shrink under the run and leave no figure per link.
	delete(res.Errors, "heap-shrank-no-per-link-figure")
	if res.Sent < 100 || res.Refused != 0 || len(res.Errors) != 0 || !res.ok() {
		t.Fatalf("result %+v", res)
	}
	if res.Peers != readers+1 || res.Documents != 1 || res.Writers != 1 {
		t.Fatalf("%d peers on %d documents, %d writers", res.Peers, res.Documents, res.Writers)
	}
	if res.Delivered != res.Sent*int64(readers) || res.Expected != res.Delivered {
		t.Fatalf("%d deliveries for %d commits to %d readers", res.Delivered, res.Sent, readers)
	}
	if len(res.Windows) != 2 || res.WindowSeconds != 1 {
		t.Fatalf("windows %+v", res.Windows)
	}
	var sum int64
	for i, w := range res.Windows {
		if w.StartS != float64(i) || w.EndS <= w.StartS || (i > 0 && w.StartS != res.Windows[i-1].EndS) {
			t.Fatalf("window %d is %v to %v s", i, w.StartS, w.EndS)
		}
		if w.Deliveries == 0 || w.P99ms <= 0 || w.P50ms > w.P99ms || w.P99ms > w.MaxMs || w.MaxMs > res.MaxMs {
			t.Fatalf("window %d: %+v (run max %v)", i, w, res.MaxMs)
		}
		sum += w.Deliveries
	}
	if last := res.Windows[len(res.Windows)-1].EndS; math.Abs(last-res.Seconds) > 1e-6 || sum != res.Delivered {
		t.Fatalf("windows end at %v s of %v, hold %d of %d deliveries", last, res.Seconds, sum, res.Delivered)
	}
	if res.CPUSeconds <= 0 || !res.CPUIncludesTool || res.DeliveriesPerCPUS <= 0 {
		t.Fatalf("CPU %v s, %v deliveries per CPU-s", res.CPUSeconds, res.DeliveriesPerCPUS)
	}
}

// A fan-out run in process, with full peers on the memory store and with
// raw readers on bbolt, delivers every commit to every reader once.
func TestFanoutDeliversEveryCommit(t *testing.T) {
	t.Run("peers", func(t *testing.T) {
		res, err := run(context.Background(), fanout(6), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		checkFanout(t, res, 6)
		if res.CommitsPerFrame != 0 {
			t.Errorf("%v commits per frame without raw readers", res.CommitsPerFrame)
		}
	})
	t.Run("raw on bolt", func(t *testing.T) {
		o := fanout(6)
		o.watch, o.store = watchRaw, storeBolt
		res, err := run(context.Background(), o, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		checkFanout(t, res, 6)
		if res.Store != storeBolt || res.CommitsPerFrame < 1 {
			t.Errorf("store %q, %v commits per frame", res.Store, res.CommitsPerFrame)
		}
	})
}

// Against a gateway of its own (a URL, not -inprocess) the same holds.
func TestFanoutSeparateGateway(t *testing.T) {
	nd, err := startNodes(context.Background(), 1, false, storeMemory)
	url := nd.urls[0]
	if err != nil {
		t.Fatal(err)
	}
	defer nd.stop()
	o := fanout(4)
	o.inprocess, o.url, o.metrics, o.watch = false, url, "-", watchRaw
	o.duration = time.Second
	res, err := run(context.Background(), o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !res.ok() || len(res.Errors) != 0 || res.Sent < 50 || res.Delivered != 4*res.Sent || len(res.Windows) != 1 || res.Windows[0].P99ms <= 0 {
		t.Fatalf("result %+v", res)
	}
}

// A commit the state covered, one received twice and one never received
// are each counted, named, and fail the run.
func TestDeliveryDuplicatesAndGaps(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	s := newRunStats(t0, time.Second, 2)
	w := newWriter(commit.NewID(), shapeFanout, 0, 4)
	var made []commit.Commit
	for i := range 6 {
		ds, err := w.next(t0.Add(time.Duration(i) * 300 * time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, commit.Commit{Deltas: ds})
	}
	// The reader's state holds commit 2 (the field's newest value).
	reader := &member{idx: 1, next: stateCovers(made[2], 1)}
	if reader.next[0] != 3 {
		t.Fatalf("the state covers up to %d", reader.next[0])
	}
	ms := []*member{{idx: 0, next: make([]int, 1)}, reader}
	for _, i := range []int{2, 3, 3, 5} { // 2 covered, 3 twice, 4 never
		s.delivery(made[i], reader, ms)
	}
	r := &result{Seconds: 2}
	r.fill(s, 3) // the reader should have had 3, 4 and 5
	if r.Delivered != 2 || r.Missing != 1 || r.Duplicates != 2 || r.ok() {
		t.Fatalf("delivered %d, missing %d, duplicate %d", r.Delivered, r.Missing, r.Duplicates)
	}
	if r.Errors["deliveries-missing"] != 1 || r.Errors["deliveries-duplicate"] != 2 {
		t.Fatalf("errors %v", r.Errors)
	}
	// Commit 3 was made at 0.9 s, 5 at 1.5 s: one in each window.
	if len(r.Windows) != 2 || r.Windows[0].Deliveries != 1 || r.Windows[1].Deliveries != 1 {
		t.Fatalf("windows %+v", r.Windows)
	}
	var out bytes.Buffer
	r.print(&out)
	if !strings.Contains(out.String(), "missing, duplicate         1, 2: FAILED") || !strings.Contains(out.String(), "made 1.0-2.0 s") {
		t.Fatalf("printed:\n%s", out.String())
	}
	// -json carries the same.
	var back struct {
		Missing    int64 `json:"deliveries_missing"`
		Duplicates int64 `json:"deliveries_duplicate"`
		Windows    []struct {
			P99 float64 `json:"latency_p99_ms"`
		} `json:"windows"`
	}
	b, err := json.Marshal(r)
	if err == nil {
		err = json.Unmarshal(b, &back)
	}
	if err != nil || back.Missing != 1 || back.Duplicates != 2 || len(back.Windows) != 2 || back.Windows[1].P99 <= 0 {
		t.Fatalf("JSON %s: %v", b, err)
	}
}
