package main

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// histogram is an HDR-style log-linear histogram of durations: 128 linear
// buckets per power of two, so any quantile is within 1/128 (0.8%) of the
// value recorded, in fixed memory whatever the sample count. Safe for
// concurrent use without a lock: thousands of watchers record into it.
type histogram struct {
	counts [histBuckets]atomic.Uint64
	n      atomic.Uint64
	max    atomic.Int64
}

const (
	histSubBits = 7 // 128 sub-buckets per octave
	histSub     = 1 << histSubBits
	// histMaxShift covers up to 2^(histMaxShift+histSubBits+1) ns, about
	// 39 minutes; longer samples land in the last bucket (max stays exact).
	histMaxShift = 33
	histBuckets  = (histMaxShift + 2) * histSub
)

func histIndex(v uint64) int {
	m := bits.Len64(v)
	if m <= histSubBits+1 {
		return int(v)
	}
	shift := m - histSubBits - 1
	if shift > histMaxShift {
		return histBuckets - 1
	}
	return (shift+1)*histSub + int(v>>shift) - histSub
}

// histValue is the highest value bucket i holds.
func histValue(i int) uint64 {
	if i < 2*histSub {
		return uint64(i)
	}
	shift := i/histSub - 1
	sub := uint64(i%histSub + histSub)
	return (sub+1)<<shift - 1
}

func (h *histogram) record(d time.Duration) {
	if d < 0 {
		d = 0 // clocks of one host: only a step of the wall clock does this
	}
	h.counts[histIndex(uint64(d))].Add(1)
	h.n.Add(1)
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

func (h *histogram) count() uint64 { return h.n.Load() }

// quantile is the smallest recorded bucket's value at or above rank q.
func (h *histogram) quantile(q float64) time.Duration {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	rank := uint64(q*float64(n) + 0.5)
	rank = max(1, min(rank, n))
	var seen uint64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen >= rank {
			return min(time.Duration(histValue(i)), h.maxValue())
		}
	}
	return h.maxValue()
}

func (h *histogram) maxValue() time.Duration { return time.Duration(h.max.Load()) }
