package admission

import (
	"container/list"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiter is a token bucket per address in a table bounded by max. Entries
// are kept in least-recently-seen order so both idle eviction and eviction
// when full take the oldest, in O(1) per request.
type limiter struct {
	every  rate.Limit
	burst  int
	window time.Duration
	max    int

	mu    sync.Mutex
	order *list.List // of *bucket, front = most recently seen
	byKey map[string]*list.Element
}

type bucket struct {
	addr string
	lim  *rate.Limiter
	seen time.Time
}

func newLimiter(limit int, window time.Duration, max int) *limiter {
	return &limiter{
		every:  rate.Limit(float64(limit) / window.Seconds()),
		burst:  limit,
		window: window,
		max:    max,
		order:  list.New(),
		byKey:  make(map[string]*list.Element),
	}
}

// allow takes one token for addr at now. When none is left it returns
// false and how long until one will be.
func (l *limiter) allow(addr string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evictIdle(now)
	var b *bucket
	if e, ok := l.byKey[addr]; ok {
		b = e.Value.(*bucket)
		l.order.MoveToFront(e)
	} else {
		if l.order.Len() >= l.max {
			l.drop(l.order.Back())
		}
		b = &bucket{addr: addr, lim: rate.NewLimiter(l.every, l.burst)}
		l.byKey[addr] = l.order.PushFront(b)
	}
	if now.After(b.seen) {
		b.seen = now
	}
	if b.lim.AllowN(now, 1) {
		return true, 0
	}
	missing := 1 - b.lim.TokensAt(now)
	wait := time.Duration(math.Ceil(missing / float64(l.every) * float64(time.Second)))
	return false, wait
}

// evictIdle forgets addresses unseen for a whole window: their bucket has
// refilled, so forgetting them changes nothing.
func (l *limiter) evictIdle(now time.Time) {
	for e := l.order.Back(); e != nil; e = l.order.Back() {
		if now.Sub(e.Value.(*bucket).seen) < l.window {
			return
		}
		l.drop(e)
	}
}

func (l *limiter) drop(e *list.Element) {
	delete(l.byKey, e.Value.(*bucket).addr)
	l.order.Remove(e)
}

func (l *limiter) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len()
}
