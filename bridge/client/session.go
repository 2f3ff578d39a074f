package client

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"google.golang.org/grpc"
)

// Message overheads the answer batcher allows for: a repeated element's
// tag and length, and the request's own wrapping.
const (
	answerOverhead  = 6
	requestOverhead = 16
)

// session is one authority stream from its Welcome to its end. The receive
// loop (authority.session's goroutine) alone reads the stream; sendLoop
// writes it, and so does the receive loop for the answers it judged inline,
// each holding sendMu.
type session struct {
	a      *authority
	stream grpc.BidiStreamingClient[v1.AuthorityRequest, v1.AuthorityResponse]
	ctx    context.Context // ends with the stream
	cancel context.CancelFunc

	out       chan *v1.AuthorityRequest // claims, releases, writes
	answers   chan *v1.Answer
	closeSend chan struct{} // closed to half-close
	closeOnce sync.Once
	done      chan struct{} // closed when the session has ended

	maxInFlight int
	budget      int // bytes one request may hold

	sendMu     sync.Mutex   // one stream.Send at a time
	sendClosed bool         // half-closed: nothing more is sent
	inlined    []*v1.Answer // the receive loop's, from the message it is on

	mu        sync.Mutex
	running   int
	queue     []queued
	idle      []chan job           // parked handler goroutines
	active    map[uint64]*inflight // running and queued questions, by id
	writes    map[uint64]chan writeOutcome
	ended     bool
	nextWrite uint64
}

type queued struct {
	q *v1.Question
	h Handlers
}

// job is a question handed to a handler goroutine, with its context.
type job struct {
	queued
	ctx context.Context
}

type inflight struct {
	ctx       questionCtx // its handler's, once started
	started   bool
	withdrawn bool
}

func newSession(a *authority, stream grpc.BidiStreamingClient[v1.AuthorityRequest, v1.AuthorityResponse], ctx context.Context, cancel context.CancelFunc, w *v1.Welcome) *session {
	o := a.c.opts
	n := o.MaxInFlight
	if m := int(w.GetLimits().GetMaxInFlight()); m > 0 && m < n {
		n = m
	}
	budget := o.MaxSendMessageBytes
	if m := int(w.GetLimits().GetMaxMessageBytes()); m > 0 && m < budget {
		budget = m
	}
	return &session{
		a: a, stream: stream, ctx: ctx, cancel: cancel,
		out:         make(chan *v1.AuthorityRequest, 64),
		answers:     make(chan *v1.Answer, n),
		closeSend:   make(chan struct{}),
		done:        make(chan struct{}),
		maxInFlight: n,
		budget:      budget - requestOverhead,
		active:      map[uint64]*inflight{},
		writes:      map[uint64]chan writeOutcome{},
	}
}

// enqueue hands m to the sender; false when ctx or the session ended first
// (then m was not sent).
func (s *session) enqueue(ctx context.Context, m *v1.AuthorityRequest) bool {
	select {
	case s.out <- m:
		return true
	case <-ctx.Done():
		return false
	case <-s.ctx.Done():
		return false
	}
}

// busy says whether handlers are running.
func (s *session) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running > 0
}

func (s *session) halfClose() { s.closeOnce.Do(func() { close(s.closeSend) }) }

// sendLoop writes the stream, batching answers up to the message budget.
func (s *session) sendLoop() {
	var carry *v1.Answer
	for {
		first := carry
		if first == nil {
			select {
			case <-s.ctx.Done():
				return
			case <-s.closeSend:
				s.flush()
				return
			case m := <-s.out:
				if s.send(m) != nil {
					return // the receive loop learns the stream's status
				}
				continue
			case first = <-s.answers:
			}
		}
		var ok bool
		if carry, ok = s.sendAnswers(first); !ok {
			return
		}
	}
}

// sendAnswers sends first with every answer already waiting, up to the
// budget; the first answer that did not fit is returned to lead the next.
func (s *session) sendAnswers(first *v1.Answer) (carry *v1.Answer, ok bool) {
	batch := []*v1.Answer{first}
	size := first.SizeVT() + answerOverhead
	yielded := false
fill:
	for len(batch) < MaxAnswersPerMessage {
		select {
		case a := <-s.answers:
			n := a.SizeVT() + answerOverhead
			if size+n > s.budget {
				carry = a
				break fill
			}
			batch = append(batch, a)
			size += n
		default:
			if yielded || !s.busy() {
				break fill
			}
			// Handlers are still running: let them finish first, once, so
			// their answers share this message rather than each its own.
			yielded = true
			runtime.Gosched()
		}
	}
	m := &v1.AuthorityRequest{Message: &v1.AuthorityRequest_Answers{Answers: &v1.Answers{Answers: batch}}}
	return carry, s.send(m) == nil
}

// send writes m unless the stream is half-closed.
func (s *session) send(m *v1.AuthorityRequest) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if s.sendClosed {
		return errStreamEnded
	}
	return s.stream.Send(m)
}

// sendInlined sends the answers judged inline from one Questions message,
// as few messages as the budget allows, with no hand-off to sendLoop. A
// failed send drops them: the receive loop learns the stream's status next.
func (s *session) sendInlined() {
	as := s.inlined
	for len(as) > 0 {
		n, size := 0, 0
		for n < len(as) && n < MaxAnswersPerMessage {
			k := as[n].SizeVT() + answerOverhead
			if n > 0 && size+k > s.budget {
				break
			}
			size += k
			n++
		}
		m := &v1.AuthorityRequest{Message: &v1.AuthorityRequest_Answers{Answers: &v1.Answers{Answers: as[:n]}}}
		if s.send(m) != nil {
			break
		}
		as = as[n:]
	}
	// Not reused: a sent message may still be read (stats handlers may use
	// it lazily, grpc.ClientStream.SendMsg says).
	s.inlined = nil
}

// flush sends what was enqueued before a half-close (writes, releases,
// finished answers), so that their outcomes still come, then half-closes.
func (s *session) flush() {
	for {
		select {
		case m := <-s.out:
			if s.send(m) != nil {
				return
			}
			continue
		default:
		}
		break
	}
	var carry *v1.Answer
	for {
		first := carry
		if first == nil {
			select {
			case first = <-s.answers:
			default:
				s.sendMu.Lock()
				s.sendClosed = true
				s.stream.CloseSend()
				s.sendMu.Unlock()
				return
			}
		}
		var ok bool
		if carry, ok = s.sendAnswers(first); !ok {
			return
		}
	}
}

// recvLoop reads the stream until it ends and returns why.
func (s *session) recvLoop() error {
	for {
		m, err := s.stream.Recv()
		if err != nil {
			return endErr(err)
		}
		switch k := m.GetMessage().(type) {
		case *v1.AuthorityResponse_Questions:
			for _, q := range k.Questions.GetQuestions() {
				s.question(q)
			}
			s.sendInlined()
		case *v1.AuthorityResponse_Withdrawn:
			s.withdraw(k.Withdrawn.GetQuestionIds())
		case *v1.AuthorityResponse_ClaimResult:
			s.a.claimResult(s, k.ClaimResult)
		case *v1.AuthorityResponse_Released:
			s.a.released(s, k.Released.GetClaimId())
		case *v1.AuthorityResponse_WriteAck:
			s.writeAck(k.WriteAck)
		case *v1.AuthorityResponse_Welcome:
			return fmt.Errorf("%w: a second Welcome", ErrProtocol)
		default:
			s.a.c.opts.Logger.Warn("weftgate authority stream: an unknown message, ignored")
		}
	}
}

// question starts a handler for q, queues it when MaxInFlight handlers
// run, and answers at once with a Failure when the queue is full too: a
// gateway that keeps its in-flight bound never gets there.
func (s *session) question(q *v1.Question) {
	h, ok := s.a.handlersFor(s, q.GetClaimId())
	if !ok {
		s.push(failure(q.GetId(), fmt.Sprintf("no claim %d on this stream", q.GetClaimId())))
		return
	}
	if h.InlineAccept && q.GetAccept() != nil {
		s.inline(h, q)
		return
	}
	s.mu.Lock()
	if _, dup := s.active[q.GetId()]; dup {
		s.mu.Unlock()
		return // asked twice on one stream: the first answer serves
	}
	switch {
	case s.running < s.maxInFlight:
		s.running++
		s.startLocked(queued{q, h})
	case len(s.queue) < s.maxInFlight:
		s.active[q.GetId()] = &inflight{}
		s.queue = append(s.queue, queued{q, h})
	default:
		s.mu.Unlock()
		s.push(failure(q.GetId(), fmt.Sprintf("more than %d questions unanswered at once (max in flight %d, and as many queued)", 2*s.maxInFlight, s.maxInFlight)))
		return
	}
	s.mu.Unlock()
}

// inline answers q on the receive loop (Handlers.InlineAccept). Nothing
// else is read from the stream meanwhile, so it cannot be withdrawn while it
// runs, and a second ask of its id finds it answered.
func (s *session) inline(h Handlers, q *v1.Question) {
	ctx := &questionCtx{}
	ctx.start(s.ctx, q.GetTimeout().AsDuration())
	a := s.answer(ctx, h, q)
	ctx.cancel(context.Canceled)
	if a != nil {
		s.inlined = append(s.inlined, s.fit(a))
	}
}

// startLocked runs one handler; s.mu is held and running counts it.
// Handler goroutines are kept while the session lasts (at most
// maxInFlight), so a question does not pay for a new goroutine and the
// stack growth its handler needs.
func (s *session) startLocked(w queued) {
	j := s.jobLocked(w)
	if n := len(s.idle); n > 0 {
		ch := s.idle[n-1]
		s.idle = s.idle[:n-1]
		ch <- j // buffered, and only this goroutine sends on it
		return
	}
	s.a.c.wg.Add(1) // the receive loop runs on a counted goroutine, so Close still waits
	go s.work(j)
}

// jobLocked gives w its context and marks it running; s.mu is held.
func (s *session) jobLocked(w queued) job {
	f := s.active[w.q.GetId()] // queued questions have theirs
	if f == nil {
		f = &inflight{}
		s.active[w.q.GetId()] = f
	}
	var timeout time.Duration
	if w.q.GetCall() == nil {
		timeout = w.q.GetTimeout().AsDuration()
	}
	f.ctx.start(s.ctx, timeout)
	f.started = true
	return job{w, &f.ctx}
}

// work runs handlers until the session ends: the job it was started with,
// then queued ones, parking in between.
func (s *session) work(j job) {
	defer s.a.c.wg.Done()
	var park chan job
	for {
		ans := s.answer(j.ctx, j.h, j.q)
		next, ok := s.finish(j.q.GetId(), ans)
		if !ok {
			s.mu.Lock()
			if s.ended {
				s.mu.Unlock()
				return
			}
			if park == nil {
				park = make(chan job, 1)
			}
			s.idle = append(s.idle, park)
			s.mu.Unlock()
			if next, ok = <-park; !ok {
				return
			}
		}
		j = next
	}
}

// finish sends a handler's answer unless its question was withdrawn, and
// returns the oldest queued question for the same goroutine to run.
func (s *session) finish(id uint64, ans *v1.Answer) (next job, ok bool) {
	s.mu.Lock()
	f := s.active[id]
	delete(s.active, id)
	s.running--
	if len(s.queue) > 0 && !s.ended {
		w := s.queue[0]
		s.queue = s.queue[1:]
		s.running++
		next, ok = s.jobLocked(w), true
	}
	s.mu.Unlock()
	if f != nil {
		f.ctx.cancel(context.Canceled)
	}
	if f != nil && !f.withdrawn && ans != nil {
		s.push(ans)
	}
	return next, ok
}

func (s *session) withdraw(ids []uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	queuedGone := false
	for _, id := range ids {
		f := s.active[id]
		switch {
		case f == nil:
		case f.started: // running: its answer will not be sent
			f.withdrawn = true
			f.ctx.cancel(context.Canceled)
		default: // queued: never started
			delete(s.active, id)
			queuedGone = true
		}
	}
	if queuedGone {
		s.queue = slices.DeleteFunc(s.queue, func(w queued) bool { return s.active[w.q.GetId()] == nil })
	}
}

// push hands an answer to the sender, replacing one too big for a message
// with a Failure saying so.
func (s *session) push(a *v1.Answer) bool {
	return s.pushCtx(s.ctx, a)
}

// fit turns an answer over the message bound into a Failure that says so.
func (s *session) fit(a *v1.Answer) *v1.Answer {
	if n := a.SizeVT() + answerOverhead; n > s.budget {
		return failure(a.GetQuestionId(), fmt.Sprintf("the answer is %d bytes, over the %d-byte message bound", n, s.budget))
	}
	return a
}

func (s *session) pushCtx(ctx context.Context, a *v1.Answer) bool {
	a = s.fit(a)
	select {
	case s.answers <- a:
		return true
	case <-ctx.Done():
		return false
	}
}

// end fails the writes still waiting: the stream that carried them is gone.
func (s *session) end() {
	s.mu.Lock()
	s.ended = true
	s.queue = nil
	for _, ch := range s.idle {
		close(ch)
	}
	s.idle = nil
	ws := s.writes
	s.writes = map[uint64]chan writeOutcome{}
	s.mu.Unlock()
	for _, ch := range ws {
		ch <- writeOutcome{err: ErrOutcomeUnknown}
	}
	close(s.done)
}

func failure(id uint64, msg string) *v1.Answer {
	return &v1.Answer{QuestionId: id, Kind: &v1.Answer_Failure{Failure: &v1.Failure{Message: msg}}}
}

// timeoutOf is a question's timeout, for handlers.
func timeoutOf(q *v1.Question) time.Duration { return q.GetTimeout().AsDuration() }
