package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
)

// stats are shared by every writer and observer.
type stats struct {
	sent, refused, delivered atomic.Int64
	duplicates               atomic.Int64 // commits a member already had
	waits                    atomic.Int64 // commits a writer held for want of credit
	lat                      histogram

	// Latency per window of the run, by when each commit was made, so
	// a gateway that falls behind shows as windows whose p99 climbs.
	t0      atomic.Int64 // when writing started, unix nanos
	winLen  int64        // nanoseconds a window
	windows []histogram

	// What raw members saw of framing: commits and the frames carrying them.
	frames, framed atomic.Int64

	mu     sync.Mutex
	errors map[string]int64
}

func newStats() *stats { return &stats{errors: map[string]int64{}} }

// newRunStats has n windows of length win for a run that writes from t0.
func newRunStats(t0 time.Time, win time.Duration, n int) *stats {
	s := newStats()
	s.t0.Store(t0.UnixNano())
	s.winLen, s.windows = int64(win), make([]histogram, n)
	return s
}

// window is the window of a commit made at sent, unix nanos; those made
// just outside the run fall into its first or last.
func (s *stats) window(sent int64) *histogram {
	if len(s.windows) == 0 {
		return nil
	}
	i := (sent - s.t0.Load()) / s.winLen
	return &s.windows[max(0, min(i, int64(len(s.windows)-1)))]
}

func (s *stats) fail(what string, err error) { s.failN(what+": "+kindOf(err), 1) }

func (s *stats) failN(kind string, n int64) {
	s.mu.Lock()
	s.errors[kind] += n
	s.mu.Unlock()
}

func (s *stats) errorsCopy() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.errors))
	for k, v := range s.errors {
		out[k] = v
	}
	return out
}

// write commits at rate per second (0: as fast as credit allows), each
// stamped with when it was made, until ctx ends. A writer holds at most
// its window of commits not yet seen by its observer, so a gateway that
// falls behind slows the writers rather than end their links.
func (s *stats) write(ctx context.Context, m *member, w *writerState, rate float64, sent *atomic.Int64) {
	var every time.Duration
	if rate > 0 {
		every = time.Duration(float64(time.Second) / rate)
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	t0 := time.Now()
	for i := 0; ; i++ {
		if every > 0 {
			if wait := time.Until(t0.Add(time.Duration(i) * every)); wait > 0 {
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-ctx.Done():
					return
				}
			}
		}
		select {
		case m.credits <- struct{}{}:
		default:
			s.waits.Add(1)
			select {
			case m.credits <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
		if ctx.Err() != nil {
			<-m.credits
			return
		}
		ds, err := w.next(time.Now())
		if err == nil {
			err = m.commit(ds)
		}
		if err != nil {
			s.fail("commit", err)
			return
		}
		s.sent.Add(1)
		sent.Add(1)
	}
}

// observe counts m's deliveries and their latency until its events end,
// and hands back credit to the writer m observes and to m itself when the
// gateway refuses m's commit.
func (s *stats) observe(m *member, ms []*member) {
	for ev := range m.d.Events() {
		switch e := ev.(type) {
		case peer.Applied:
			s.delivery(e.Commit, m, ms)
		case peer.Refused:
			if e.Mine {
				s.refused.Add(1)
				if m.credits != nil {
					select {
					case <-m.credits:
					default:
					}
				}
			} else {
				s.failN("refused-by-peer", 1)
			}
		case peer.Ended:
			if e.Reason != "closed" {
				s.failN("ended: "+string(e.Reason), 1)
			}
		}
	}
}

// delivery counts a commit that reached m now.
func (s *stats) delivery(c commit.Commit, m *member, ms []*member) {
	if s.deliver(time.Now().UnixNano(), c, m, ms) {
		s.delivered.Add(1)
	}
}

// deliver records the latency of a commit that reached m at now, unix
// nanos, and returns its writer's credit when m is that writer's observer;
// the caller counts it when it reports true. A link delivers in order
// (aweft replication section 1), so a commit at or below one m already
// has, or that its state covered, is a duplicate; one past a gap leaves
// the gap's commits missing. Only m's reader calls it.
func (s *stats) deliver(now int64, c commit.Commit, m *member, ms []*member) bool {
	sent, w, seq, ok := readStamp(c)
	if !ok {
		s.failN("unstamped-commit", 1)
		return false
	}
	if w >= len(m.next) {
		s.failN("commit-from-no-writer", 1)
		return false
	}
	if seq < m.next[w] {
		s.duplicates.Add(1)
		return false
	}
	m.next[w] = seq + 1
	d := time.Duration(now - sent)
	s.lat.record(d)
	if h := s.window(sent); h != nil {
		h.record(d)
	}
	if n := len(ms); w >= 0 && w < n && (w+1)%n == m.idx && ms[w].credits != nil {
		select {
		case <-ms[w].credits:
		default:
		}
	}
	return true
}

// tally counts what the run lost (want less what arrived) and repeated,
// as errors: either is a failed run.
func (s *stats) tally(want int64) (missing, duplicates int64) {
	missing, duplicates = max(0, want-s.delivered.Load()), s.duplicates.Load()
	if missing > 0 {
		s.failN("deliveries-missing", missing)
	}
	if duplicates > 0 {
		s.failN("deliveries-duplicate", duplicates)
	}
	return missing, duplicates
}

// waitDelivered waits until want deliveries have been counted, or grace
// passes, or ctx ends.
func (s *stats) waitDelivered(ctx context.Context, want int64, grace time.Duration) {
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for s.delivered.Load() < want {
		select {
		case <-tick.C:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// showProgress writes a line a second until ctx ends.
func showProgress(ctx context.Context, w io.Writer, s *stats, a *authority, t0 time.Time) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(w)
			return
		case <-t.C:
			secs := time.Since(t0).Seconds()
			line := fmt.Sprintf("\r%4.0fs  sent %d (%.0f/s)  delivered %d (%.0f/s)  refused %d  p99 %.1f ms",
				secs, s.sent.Load(), float64(s.sent.Load())/secs, s.delivered.Load(), float64(s.delivered.Load())/secs,
				s.refused.Load(), ms(s.lat.quantile(0.99)))
			if h := s.window(time.Now().UnixNano()); h != nil && h.count() > 0 {
				// So far: the window's later commits are still arriving.
				line += fmt.Sprintf(" (this window %.1f ms)", ms(h.quantile(0.99)))
			}
			if a != nil {
				line += fmt.Sprintf("  verdicts %.0f/s", float64(a.verdicts.Load())/secs)
			}
			fmt.Fprint(w, line+" ")
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
