package docsm

import (
	"time"

	"github.com/weftgate/weftgate/protocol/frame"
)

// Verdict answers whether a commit may land. No reasons means accepted.
type Verdict struct {
	Reasons []frame.Reason
}

// Accepted reports whether the verdict lets the commit land.
func (v Verdict) Accepted() bool { return len(v.Reasons) == 0 }

// PipelineConfig bounds a Pipeline. The zero value asks one question at a
// time and never times one out.
type PipelineConfig struct {
	// MaxInFlight bounds the questions asked and not yet answered.
	MaxInFlight int
	// Timeout is how long a question may go unanswered; 0 is for ever.
	Timeout time.Duration
	// TimedOut is the verdict a question past Timeout gets.
	TimedOut Verdict
}

// Pipeline holds one document's commits, in arrival order, from Add until
// Decided hands each out with its verdict. It is not safe for concurrent
// use: one driver goroutine owns it.
type Pipeline[T any] struct {
	cfg      PipelineConfig
	q        []*entry[T]
	inflight int
}

type entry[T any] struct {
	item     T
	asked    bool
	verdict  *Verdict
	deadline time.Time
	gen      uint32 // numbers the asks, so a stale answer is known
}

// Ticket names one ask of one commit; Answer takes it back.
type Ticket[T any] struct {
	e   *entry[T]
	gen uint32
}

// Question is one commit to ask the authority about, now.
type Question[T any] struct {
	Item   T
	Ticket Ticket[T]
}

// Decision is a commit whose turn has come, with its verdict.
type Decision[T any] struct {
	Item    T
	Verdict Verdict
}

// NewPipeline returns an empty pipeline.
func NewPipeline[T any](cfg PipelineConfig) *Pipeline[T] {
	if cfg.MaxInFlight < 1 {
		cfg.MaxInFlight = 1
	}
	return &Pipeline[T]{cfg: cfg}
}

// Len is the commits not yet decided.
func (p *Pipeline[T]) Len() int { return len(p.q) }

// InFlight is the questions asked and not yet answered.
func (p *Pipeline[T]) InFlight() int { return p.inflight }

// Add queues item behind every commit already held.
func (p *Pipeline[T]) Add(item T) { p.q = append(p.q, &entry[T]{item: item}) }

// Ask returns the commits to ask about now, in order, up to MaxInFlight
// unanswered; each question's deadline runs from now.
func (p *Pipeline[T]) Ask(now time.Time) []Question[T] {
	var out []Question[T]
	for _, e := range p.q {
		if p.inflight >= p.cfg.MaxInFlight {
			break
		}
		if e.asked || e.verdict != nil {
			continue
		}
		e.asked = true
		e.gen++
		e.deadline = now.Add(p.cfg.Timeout)
		p.inflight++
		out = append(out, Question[T]{Item: e.item, Ticket: Ticket[T]{e, e.gen}})
	}
	return out
}

// Answer records v for the question t names. It reports false for an
// answer that came too late: after a timeout, after the commit was asked
// again, or after it left the pipeline.
func (p *Pipeline[T]) Answer(t Ticket[T], v Verdict) bool {
	e := t.e
	if e == nil || e.gen != t.gen || !e.asked || e.verdict != nil {
		return false
	}
	e.verdict = &v
	p.inflight--
	return true
}

// Expire gives every question unanswered at now past its deadline the
// TimedOut verdict, and returns how many it timed out.
func (p *Pipeline[T]) Expire(now time.Time) int {
	if p.cfg.Timeout <= 0 {
		return 0
	}
	n := 0
	for _, e := range p.q {
		if e.asked && e.verdict == nil && !e.deadline.After(now) {
			v := p.cfg.TimedOut
			e.verdict = &v
			p.inflight--
			n++
		}
	}
	return n
}

// Deadline is the earliest deadline of an unanswered question; ok is false
// when none is unanswered (or questions never time out).
func (p *Pipeline[T]) Deadline() (at time.Time, ok bool) {
	if p.cfg.Timeout <= 0 {
		return at, false
	}
	for _, e := range p.q {
		// Deadlines rise along the queue except for a commit asked
		// again, so every one is looked at.
		if e.asked && e.verdict == nil && (!ok || e.deadline.Before(at)) {
			at, ok = e.deadline, true
		}
	}
	return at, ok
}

// Next takes the commit at the head when it is decided. stale is asked
// about an accepted one first: when what landed since it was asked moved
// what it touches, it is put back to be asked again (with nothing ahead of
// it now, so at most once) and Next reports none. The caller applies each
// commit Next hands out before it calls Next again, since the next one's
// staleness depends on it.
func (p *Pipeline[T]) Next(stale func(T) bool) (Decision[T], bool) {
	if len(p.q) == 0 || p.q[0].verdict == nil {
		return Decision[T]{}, false
	}
	e := p.q[0]
	if e.verdict.Accepted() && stale != nil && stale(e.item) {
		e.verdict, e.asked = nil, false
		return Decision[T]{}, false
	}
	p.q[0] = nil
	p.q = p.q[1:]
	return Decision[T]{Item: e.item, Verdict: *e.verdict}, true
}

// Requeue puts items, accepted once and applied, back at the head in
// order with verdict v: their append lost a race with another writer of the
// shared log (issue 17). They are decided again against the document as
// the log has it, so each is asked again if what it touches moved (stale),
// and otherwise applied where it now falls.
func (p *Pipeline[T]) Requeue(items []T, v Verdict) {
	if len(items) == 0 {
		return
	}
	head := make([]*entry[T], 0, len(items)+len(p.q))
	for _, it := range items {
		v := v
		head = append(head, &entry[T]{item: it, asked: true, verdict: &v})
	}
	p.q = append(head, p.q...)
}

// DrainAll empties the pipeline and returns every commit still in it, in
// order; answers to their questions are then ignored.
func (p *Pipeline[T]) DrainAll() []T {
	out := make([]T, 0, len(p.q))
	for _, e := range p.q {
		e.gen++ // any answer still to come is stale
		out = append(out, e.item)
	}
	p.q, p.inflight = nil, 0
	return out
}

// Undecided reports whether any commit waits for its turn.
func (p *Pipeline[T]) Undecided() bool { return len(p.q) > 0 }
