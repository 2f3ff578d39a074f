package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weftgate/weftgate/protocol"
)

// maxNodes bounds -nodes and the -url list: each node is a gateway (and
// with -inprocess a NATS connection) on a 2-core host.
const maxNodes = 16

// Join retries while a document made on another node has not reached the
// log yet (README, Several nodes): the first wait, and the longest.
const (
	joinRetryFirst = 5 * time.Millisecond
	joinRetryMax   = 200 * time.Millisecond
)

// splitURLs reads a comma-separated -url (or -metrics) list.
func splitURLs(s string) []string {
	var out []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// nodeOf places member idx of a document (writers first) on one of n
// nodes: writer j on node j mod n, readers round-robin on the nodes after
// the first, so that with one writer every reader is on another node than
// the writer.
func nodeOf(idx, writers, n int) int {
	if idx < writers {
		return idx % n
	}
	if n == 1 {
		return 0
	}
	return 1 + (idx-writers)%(n-1)
}

// node is one gateway of a run, as the result reports it.
type node struct {
	URL     string  `json:"url"`
	Writers int     `json:"writers"` // members the tool placed on it
	Readers int     `json:"readers"`
	Links   float64 `json:"links"` // the gateway's open links, once connected (-1: unknown)
	// Conflicts and CatchUps are the node's shared-log appends that lost a
	// race with another node, and its catch-up reads, while writing.
	Conflicts float64 `json:"log_conflicts"`
	CatchUps  float64 `json:"log_catch_ups"`
}

// placement counts the members placed on each node.
func placement(urls []string, docs, peers, writers int) []node {
	ns := make([]node, len(urls))
	for i, u := range urls {
		ns[i] = node{URL: u, Links: -1}
	}
	for i := range peers {
		idx := i / docs
		n := &ns[nodeOf(idx, writers, len(urls))]
		if idx < writers {
			n.Writers++
		} else {
			n.Readers++
		}
	}
	return ns
}

// retryNoDocument calls join until it returns anything but no-document or
// ctx ends: a member on another node than the document's maker may ask
// before the creation has reached the shared log.
func retryNoDocument[T any](ctx context.Context, join func() (T, error)) (T, error) {
	wait := joinRetryFirst
	for {
		v, err := join()
		if err == nil || protocol.ReasonOf(err) != protocol.NoDocument {
			return v, err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return v, fmt.Errorf("%w (still %w)", ctx.Err(), err)
		}
		wait = min(2*wait, joinRetryMax)
	}
}

// checkURLs validates the -url list of separate gateways and the -metrics
// pages beside them (one per -url when given, comma-separated).
func (o *options) checkURLs() error {
	o.urls = splitURLs(o.url)
	switch {
	case len(o.urls) == 0:
		return errors.New("-url names no gateway")
	case len(o.urls) > maxNodes:
		return fmt.Errorf("-url names %d gateways, more than %d", len(o.urls), maxNodes)
	}
	for _, u := range o.urls {
		if err := loopbackOnly("-url", u, o.allowRemote); err != nil {
			return err
		}
	}
	switch o.metrics {
	case "-":
		o.metricsURLs = nil
	case "":
		o.metricsURLs = o.metricsURLs[:0]
		for _, u := range o.urls {
			m, _ := metricsURL(u)
			o.metricsURLs = append(o.metricsURLs, m)
		}
	default:
		o.metricsURLs = splitURLs(o.metrics)
		if len(o.metricsURLs) != len(o.urls) {
			return fmt.Errorf("-metrics names %d pages for %d -url gateways: one each, in order", len(o.metricsURLs), len(o.urls))
		}
	}
	return nil
}
