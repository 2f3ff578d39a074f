package main

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestHistIndexRoundTrip(t *testing.T) {
	prev := -1
	for _, v := range []uint64{0, 1, 127, 128, 255, 256, 257, 1000, 1 << 20, 123456789, 1 << 40} {
		i := histIndex(v)
		if i < prev {
			t.Fatalf("index of %d is %d, below the previous %d", v, i, prev)
		}
		prev = i
		if hi := histValue(i); hi < v || (v > 0 && float64(hi-v) > float64(v)/histSub) {
			t.Errorf("%d: bucket %d tops at %d", v, i, hi)
		}
	}
	if histIndex(1<<62) != histBuckets-1 {
		t.Error("a huge value is not in the last bucket")
	}
}

// Quantiles agree with the sorted samples to within the histogram's 1/128.
func TestHistogramQuantiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h histogram
	xs := make([]time.Duration, 100_000)
	for i := range xs {
		xs[i] = time.Duration(r.ExpFloat64() * float64(3*time.Millisecond))
		h.record(xs[i])
	}
	slices.Sort(xs)
	for _, q := range []float64{0.5, 0.99, 0.999} {
		want := xs[int(q*float64(len(xs)))-1]
		got := h.quantile(q)
		if d := got - want; d < -want/100 || d > want/100 {
			t.Errorf("p%v: %v, want %v", q*100, got, want)
		}
	}
	if h.maxValue() != xs[len(xs)-1] || h.count() != uint64(len(xs)) {
		t.Errorf("max %v count %d", h.maxValue(), h.count())
	}
	var empty histogram
	if empty.quantile(0.99) != 0 {
		t.Error("an empty histogram has a quantile")
	}
}
