package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/weftgate/weftgate/protocol"
)

func TestNodeOfPlacesWritersAndReaders(t *testing.T) {
	for _, c := range []struct {
		writers, n int
		want       []int // nodes of members 0..len-1 (writers first)
	}{
		{1, 1, []int{0, 0, 0}},
		{1, 2, []int{0, 1, 1, 1}},
		{1, 3, []int{0, 1, 2, 1, 2}},
		{3, 3, []int{0, 1, 2, 1, 2, 1}},
		{4, 3, []int{0, 1, 2, 0, 1, 2}},
	} {
		for idx, want := range c.want {
			if got := nodeOf(idx, c.writers, c.n); got != want {
				t.Errorf("%d writers on %d nodes: member %d on node %d, want %d", c.writers, c.n, idx, got, want)
			}
		}
	}
}

// A join that meets no-document is tried again until the document is
// there or the time is up; other errors end it at once.
func TestRetryNoDocument(t *testing.T) {
	noDoc := protocol.Errorf(protocol.NoDocument, "not yet")
	calls := 0
	v, err := retryNoDocument(context.Background(), func() (int, error) {
		if calls++; calls < 3 {
			return 0, noDoc
		}
		return 7, nil
	})
	if v != 7 || err != nil || calls != 3 {
		t.Fatalf("%d, %v after %d calls", v, err, calls)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = retryNoDocument(ctx, func() (int, error) { return 0, noDoc })
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, noDoc) || kindOf(err) != "timeout" {
		t.Fatalf("forever no-document: %v (kind %s)", err, kindOf(err))
	}
	other := errors.New("refused")
	calls = 0
	if _, err := retryNoDocument(context.Background(), func() (int, error) { calls++; return 0, other }); err != other || calls != 1 {
		t.Fatalf("%v after %d calls", err, calls)
	}
}

// natsRun runs o and drops the one note a run on the embedded nats-server
// may give for reasons of its own: the server's background work can free
// more heap than the links take, leaving no heap figure per link.
func natsRun(t *testing.T, o options) *result {
	t.Helper()
	res, err := run(context.Background(), o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	delete(res.Errors, "heap-shrank-no-per-link-figure")
	return res
}

// checkNodes asserts each node's links as the gateway counts them, and the
// writers and readers the tool placed on it.
func checkNodes(t *testing.T, res *result, links, writers, readers []int) {
	t.Helper()
	if len(res.Nodes) != len(links) {
		t.Fatalf("%d nodes, want %d: %+v", len(res.Nodes), len(links), res.Nodes)
	}
	seen := map[string]bool{}
	for i, n := range res.Nodes {
		if n.Links != float64(links[i]) || n.Writers != writers[i] || n.Readers != readers[i] || seen[n.URL] || !strings.HasPrefix(n.URL, "ws://127.0.0.1:") {
			t.Fatalf("node %d: %+v, want %d links, %d writers, %d readers", i, n, links[i], writers[i], readers[i])
		}
		seen[n.URL] = true
	}
}

// Three in-process nodes on one NATS log: one writer on the first node,
// readers on the other two, and every reader gets every commit once.
func TestFanoutAcrossThreeNodes(t *testing.T) {
	o := fanout(6)
	o.nodes = 3
	res := natsRun(t, o)
	checkFanout(t, res, 6)
	if res.Store != storeNats || res.Gateway == nil || res.Gateway.Links != 7 {
		t.Fatalf("store %q, gauges %+v", res.Store, res.Gateway)
	}
	checkNodes(t, res, []int{1, 3, 3}, []int{1, 0, 0}, []int{0, 3, 3})
}

// One hot document written from three nodes at once: one order, every
// commit of every writer reaches the other five members once.
func TestHotDocumentFromThreeNodes(t *testing.T) {
	o := short(shapeField)
	o.nodes, o.docs, o.writers, o.peers, o.duration = 3, 1, 3, 6, time.Second
	res := natsRun(t, o)
	if res.Sent < 300 || res.Refused != 0 || len(res.Errors) != 0 || !res.ok() || res.Delivered != res.Sent*5 {
		t.Fatalf("result %+v", res)
	}
	checkNodes(t, res, []int{1, 3, 2}, []int{1, 1, 1}, []int{0, 2, 1})
}

// One backend, connected to the first node, judges every commit written
// through all three: the other nodes relay their questions to it over
// NATS (decision 034), none is answered by the fallback policy.
func TestAuthorityOnThreeNodes(t *testing.T) {
	o := short(shapeField)
	o.nodes, o.docs, o.writers, o.peers, o.duration, o.authority = 3, 1, 3, 6, time.Second, true
	res := natsRun(t, o)
	if res.Sent < 100 || res.Refused != 0 || len(res.Errors) != 0 || !res.ok() || res.Delivered != res.Sent*5 {
		t.Fatalf("result %+v", res)
	}
	if res.Verdicts != res.Sent {
		t.Fatalf("%d verdicts for %d commits", res.Verdicts, res.Sent)
	}
	checkNodes(t, res, []int{1, 3, 2}, []int{1, 1, 1}, []int{0, 2, 1})
}

// The single-node figure of the ratio: one node, on the NATS store.
func TestOneNodeOnNats(t *testing.T) {
	o := fanout(3)
	o.store, o.set = storeNats, map[string]bool{"store": true}
	res := natsRun(t, o)
	checkFanout(t, res, 3)
	checkNodes(t, res, []int{4}, []int{1}, []int{3})
}

// Separate gateways given as a -url list: raw members on two documents
// land on both nodes, joining documents made on the other one.
func TestURLListOfSeparateGateways(t *testing.T) {
	nd, err := startNodes(context.Background(), 2, false, storeNats)
	if err != nil {
		t.Fatal(err)
	}
	defer nd.stop()
	o := short(shapeField)
	o.inprocess, o.url, o.metrics, o.watch, o.write = false, strings.Join(nd.urls, ", "), "-", watchRaw, watchRaw
	o.peers, o.docs, o.writers = 8, 2, 2
	res, err := run(context.Background(), o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent < 100 || res.Refused != 0 || len(res.Errors) != 0 || !res.ok() || res.Delivered != res.Sent*3 {
		t.Fatalf("result %+v", res)
	}
	// Links unknown without -metrics; placement as asked.
	checkNodes(t, res, []int{-1, -1}, []int{2, 2}, []int{0, 4})
	if res.Nodes[0].URL != nd.urls[0] || res.Nodes[1].URL != nd.urls[1] {
		t.Fatalf("nodes %+v, urls %v", res.Nodes, nd.urls)
	}
}

func TestNodeOptionsRefused(t *testing.T) {
	for name, change := range map[string]func(*options){
		"nodes without -inprocess": func(o *options) { o.inprocess, o.url, o.nodes = false, "ws://127.0.0.1:1/", 3 },
		"nodes on bolt":            func(o *options) { o.nodes, o.store, o.set = 3, storeBolt, map[string]bool{"store": true} },
		"memory given with nodes":  func(o *options) { o.nodes, o.store, o.set = 3, storeMemory, map[string]bool{"store": true} },
		"too many nodes":           func(o *options) { o.nodes = maxNodes + 1 },
		"negative nodes":           func(o *options) { o.nodes = -1 },
		"authority on a url list":  func(o *options) { o.inprocess, o.url, o.authority = false, "ws://127.0.0.1:1/,ws://127.0.0.1:2/", true },
		"nats for a separate one":  func(o *options) { o.inprocess, o.url, o.store = false, "ws://127.0.0.1:1/", storeNats },
		"empty url list":           func(o *options) { o.inprocess, o.url = false, " , " },
		"one remote in the list":   func(o *options) { o.inprocess, o.url = false, "ws://127.0.0.1:1/,ws://192.0.2.1/" },
		"metrics pages not one each": func(o *options) {
			o.inprocess, o.url, o.metrics = false, "ws://127.0.0.1:1/,ws://127.0.0.1:2/", "http://127.0.0.1:1/metrics"
		},
	} {
		o := short(shapeField)
		change(&o)
		if _, err := run(context.Background(), o, io.Discard); err == nil {
			t.Errorf("%s: ran", name)
		}
	}
}
