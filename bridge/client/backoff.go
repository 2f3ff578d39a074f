package client

import (
	"math/rand/v2"
	"time"
)

// Backoff decides how long a failed stream waits before it is opened again.
type Backoff interface {
	// Delay is the wait after the failures-th consecutive failure (1 for
	// the first). A successful exchange (a Welcome, a subscription event)
	// resets the count.
	Delay(failures int) time.Duration
}

// Clock is the time source for backoff waits, replaceable in tests.
type Clock interface {
	After(d time.Duration) <-chan time.Time
}

// The default backoff: 100 ms doubling to 30 s.
const (
	DefaultBackoffBase = 100 * time.Millisecond
	DefaultBackoffMax  = 30 * time.Second
)

// Exponential is full-jitter exponential backoff: after the n-th failure it
// waits a uniformly random time in [0, min(Max, Base*2^(n-1))], so many
// backends dropped at once do not come back at once.
type Exponential struct {
	Base, Max time.Duration
	// Int64N returns a uniform number in [0, n); nil is math/rand/v2.
	Int64N func(n int64) int64
}

// Ceiling is the longest wait after the n-th failure.
func (e Exponential) Ceiling(n int) time.Duration {
	if n < 1 || e.Base <= 0 {
		return 0
	}
	d := e.Base
	for i := 1; i < n && d < e.Max; i++ {
		d *= 2
	}
	if d > e.Max {
		d = e.Max
	}
	return d
}

// Delay implements Backoff.
func (e Exponential) Delay(n int) time.Duration {
	c := e.Ceiling(n)
	if c <= 0 {
		return 0
	}
	r := e.Int64N
	if r == nil {
		r = rand.Int64N
	}
	return time.Duration(r(int64(c) + 1))
}

type realClock struct{}

func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
