package main

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/store"
)

// Latencies the gateway does not count itself, measured by wrapping the
// interfaces it calls. The wrappers change no behaviour.

// latencyBuckets run from 0.5 ms to about 8 s: a local verdict or an fsync
// at the bottom, the default 5 s judge timeout near the top.
var latencyBuckets = prometheus.ExponentialBuckets(0.0005, 2, 15)

// timedAuthority observes how long each question to the authority took to
// be answered. A question never answered (the gateway timed it out) is not
// observed here; weftgate_authority_timeouts_total counts those.
type timedAuthority struct {
	inner gateway.Authority
	hist  *prometheus.HistogramVec // label question: judge, open
}

func (a timedAuthority) Judge(req *gateway.AcceptRequest, reply func(gateway.Verdict)) {
	start := time.Now()
	a.inner.Judge(req, func(v gateway.Verdict) {
		a.hist.WithLabelValues("judge").Observe(time.Since(start).Seconds())
		reply(v)
	})
}

func (a timedAuthority) MayOpen(req gateway.OpenRequest, reply func(error)) {
	start := time.Now()
	a.inner.MayOpen(req, func(err error) {
		a.hist.WithLabelValues("open").Observe(time.Since(start).Seconds())
		reply(err)
	})
}

// Load forwards to the inner authority when it can load documents (the
// bridge), and finds nothing otherwise.
func (a timedAuthority) Load(ctx context.Context, req gateway.LoadRequest) (gateway.Loaded, bool, error) {
	l, ok := a.inner.(gateway.Loader)
	if !ok {
		return gateway.Loaded{}, false, nil
	}
	start := time.Now()
	defer func() { a.hist.WithLabelValues("load").Observe(time.Since(start).Seconds()) }()
	return l.Load(ctx, req)
}

// timedStore observes how long Append takes to return: the wait for the
// group commit and its sync to disk, which every delivery waits on.
type timedStore struct {
	store.Store
	hist prometheus.Histogram
}

func (s timedStore) Append(ctx context.Context, doc string, recs []store.Record) error {
	start := time.Now()
	err := s.Store.Append(ctx, doc, recs)
	s.hist.Observe(time.Since(start).Seconds())
	return err
}

// timedFollower is timedStore for a log other nodes share: the wrapper
// must keep Follow, or the gateway would not see that other nodes append.
type timedFollower struct {
	timedStore
	f gateway.Follower
}

func (s timedFollower) Follow(ctx context.Context, doc string, after uint64, fn func(store.Record) error) error {
	return s.f.Follow(ctx, doc, after, fn)
}

// timed wraps st to observe its appends, keeping what else it is.
func timed(st store.Store, hist prometheus.Histogram) store.Store {
	t := timedStore{Store: st, hist: hist}
	if f, ok := st.(gateway.Follower); ok {
		return timedFollower{timedStore: t, f: f}
	}
	return t
}

// storeHealth remembers the store's last health report for the metrics and
// logs each change.
type storeHealth struct {
	down atomic.Bool
	log  *slog.Logger
}

func (h *storeHealth) changed(err error) {
	h.down.Store(err != nil)
	if err != nil {
		h.log.Error("store failed; writes are refused until a probe write succeeds", "err", err)
	} else {
		h.log.Info("store recovered")
	}
}
