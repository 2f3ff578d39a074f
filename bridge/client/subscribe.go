package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"sync"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol/commit"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// EventKind says what an Event is.
type EventKind uint8

const (
	// CommitEvent is one applied commit at Cursor.
	CommitEvent EventKind = iota + 1
	// SnapshotEvent is a document's whole state at Cursor: the callback
	// replaces what it held for the document.
	SnapshotEvent
	// CaughtUpEvent marks the end of the backlog on one stream; what
	// follows is live. It comes again after every reconnect.
	CaughtUpEvent
)

func (k EventKind) String() string {
	switch k {
	case CommitEvent:
		return "commit"
	case SnapshotEvent:
		return "snapshot"
	case CaughtUpEvent:
		return "caught-up"
	}
	return fmt.Sprintf("event(%d)", uint8(k))
}

// SnapshotReason is why a snapshot came instead of commits.
type SnapshotReason uint8

const (
	// SnapshotRequested: the subscription asked to start with one.
	SnapshotRequested SnapshotReason = iota + 1
	// SnapshotExpired: the gateway no longer holds the commits after the
	// resume cursor.
	SnapshotExpired
	// SnapshotAhead: the resume cursor is ahead of the document, so what
	// the subscriber held is not this document's past.
	SnapshotAhead
)

func (r SnapshotReason) String() string {
	switch r {
	case SnapshotRequested:
		return "requested"
	case SnapshotExpired:
		return "expired"
	case SnapshotAhead:
		return "ahead"
	}
	return fmt.Sprintf("snapshot-reason(%d)", uint8(r))
}

// Event is one subscription event. For each document a CommitEvent's
// Cursor is the previous event's plus one, or the event follows a
// SnapshotEvent at Cursor-1.
type Event struct {
	Kind     EventKind
	Document string
	Cursor   uint64
	// Origin is who made a CommitEvent's commit.
	Origin Origin
	// CommitView is a CommitEvent's commit, or a SnapshotEvent's state
	// commit (no deltas for an empty document).
	CommitView
	// Root and Reason are a SnapshotEvent's.
	Root   Root
	Reason SnapshotReason
}

// SubscribeOptions qualify a pattern subscription.
type SubscribeOptions struct {
	// Resume is the last cursor seen per document: that document's events
	// start after it. At most MaxResumeDocuments entries.
	Resume map[string]uint64
	// Snapshot starts every matching document not in Resume with its
	// snapshot; otherwise they start with their next commit.
	Snapshot bool
}

// Subscribe follows one document's commits after cursor from (0: from its
// first commit), calling fn for each event in order, on the calling
// goroutine. When the stream drops it resumes from the last cursor fn
// accepted, with backoff, so fn sees no gap and no duplicate; a snapshot
// comes when the gateway no longer holds the commits in between.
//
// It returns fn's error as is when fn fails, ctx's error when ctx ends,
// ErrClosed when the client closes, and the stream's error when retrying
// cannot help (an invalid request, a refused token, an unreadable event).
func (c *Client) Subscribe(ctx context.Context, doc string, from uint64, fn func(Event) error) error {
	sub := newSubscription(doc, false)
	sub.docs[doc] = &cursors{observed: from, applied: from, known: true}
	return c.follow(ctx, sub, &v1.SubscribeRequest{Target: &v1.SubscribeRequest_Document{Document: doc}}, v1.StartPosition_START_POSITION_LIVE, fn)
}

// SubscribePattern follows every document p matches, as Subscribe does
// for one. After a reconnect, matching documents it had not seen yet start
// with a snapshot, so none is missed.
func (c *Client) SubscribePattern(ctx context.Context, p Pattern, o SubscribeOptions, fn func(Event) error) error {
	if len(o.Resume) > MaxResumeDocuments {
		return fmt.Errorf("%w: %d, more than %d", ErrTooManyResumed, len(o.Resume), MaxResumeDocuments)
	}
	sub := newSubscription(p.String(), true)
	for d, cur := range o.Resume {
		sub.docs[d] = &cursors{observed: cur, applied: cur, known: true}
	}
	start := v1.StartPosition_START_POSITION_LIVE
	if o.Snapshot {
		start = v1.StartPosition_START_POSITION_SNAPSHOT
	}
	return c.follow(ctx, sub, &v1.SubscribeRequest{Target: &v1.SubscribeRequest_Pattern{Pattern: patternTo(p)}}, start, fn)
}

// callbackError carries fn's error out of the stream loop untouched.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }

func (c *Client) follow(ctx context.Context, sub *subscription, target *v1.SubscribeRequest, start v1.StartPosition, fn func(Event) error) error {
	if !c.track() {
		return ErrClosed
	}
	defer c.wg.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	c.subs.add(sub)
	defer c.subs.remove(sub)
	for {
		req := sub.request(target, start)
		if sub.pattern {
			start = v1.StartPosition_START_POSITION_SNAPSHOT // what appeared meanwhile is not missed
		}
		err := c.stream(ctx, sub, req, fn)
		if cb, ok := errors.AsType[*callbackError](err); ok {
			sub.end(cb.err)
			return cb.err
		}
		switch {
		case c.ctx.Err() != nil:
			sub.end(ErrClosed)
			return ErrClosed
		case ctx.Err() != nil:
			sub.end(ctx.Err())
			return ctx.Err()
		case permanent(err):
			sub.end(err)
			return fmt.Errorf("client: Subscribe %s: %w", sub.target, err)
		}
		n := sub.failed(err)
		d := c.opts.Backoff.Delay(n)
		c.opts.Logger.Warn("weftgate subscription ended", "target", sub.target, "err", err, "failures", n, "retry_in", d)
		select {
		case <-c.opts.Clock.After(d):
		case <-ctx.Done():
		}
	}
}

// permanent errors are the request's own: retrying the same request cannot
// help.
func permanent(err error) bool {
	if errors.Is(err, ErrBadEvent) || errors.Is(err, ErrTooManyResumed) {
		return true
	}
	switch status.Code(err) {
	case codes.InvalidArgument, codes.Unimplemented, codes.Unauthenticated, codes.PermissionDenied, codes.FailedPrecondition:
		return true
	}
	return false
}

// stream runs one Subscribe stream until it ends.
func (c *Client) stream(ctx context.Context, sub *subscription, req *v1.SubscribeRequest, fn func(Event) error) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sub.setState(StateConnecting)
	st, err := c.svc.Subscribe(sctx, req)
	if err != nil {
		return err
	}
	for first := true; ; first = false {
		m, err := st.Recv()
		if err == io.EOF {
			return errStreamEnded
		}
		if err != nil {
			return err
		}
		if first {
			sub.exchanged() // a successful exchange resets the backoff
		}
		ev, deliver, err := sub.event(m, c.limits)
		if err != nil || !deliver {
			if err != nil {
				return err
			}
			continue
		}
		if err := fn(ev); err != nil {
			return &callbackError{err}
		}
		sub.applied(ev)
	}
}

type cursors struct {
	observed, applied uint64
	known             bool // applied is a real position; else the next commit sets it
}

// subscription is one Subscribe call's state. Only its goroutine writes
// it; Status reads it under mu.
type subscription struct {
	id      uint64
	target  string
	pattern bool

	mu       sync.Mutex
	state    ConnState
	lastErr  error
	failures int
	docs     map[string]*cursors
	dups     int
}

func newSubscription(target string, pattern bool) *subscription {
	return &subscription{target: target, pattern: pattern, docs: map[string]*cursors{}}
}

// request is target resuming every document with a known position.
func (s *subscription) request(target *v1.SubscribeRequest, start v1.StartPosition) *v1.SubscribeRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	req := &v1.SubscribeRequest{Target: target.Target, Start: start, Resume: make(map[string]uint64, len(s.docs))}
	for d, cur := range s.docs {
		if cur.known {
			req.Resume[d] = cur.applied
		}
	}
	return req
}

// event checks m against the cursors and decodes it. deliver is false for
// a duplicate, which is dropped.
func (s *subscription) event(m *v1.SubscribeResponse, l commit.Limits) (Event, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch k := m.GetEvent().(type) {
	case *v1.SubscribeResponse_Commit:
		e := k.Commit
		cur, err := s.cursorsLocked(e.GetDocument())
		if err != nil {
			return Event{}, false, err
		}
		c := e.GetCursor()
		cur.observed = max(cur.observed, c)
		if cur.known && c <= cur.applied {
			s.dups++
			return Event{}, false, nil
		}
		if cur.known && c != cur.applied+1 {
			return Event{}, false, fmt.Errorf("%w: %q went from %d to %d", ErrCursorGap, e.GetDocument(), cur.applied, c)
		}
		v, err := viewFrom(e.GetCommit(), l)
		if err != nil {
			return Event{}, false, fmt.Errorf("%w: %q at %d: %w", ErrBadEvent, e.GetDocument(), c, err)
		}
		return Event{Kind: CommitEvent, Document: e.GetDocument(), Cursor: c, Origin: originFrom(e.GetOrigin()), CommitView: v}, true, nil
	case *v1.SubscribeResponse_Snapshot:
		e := k.Snapshot
		cur, err := s.cursorsLocked(e.GetDocument())
		if err != nil {
			return Event{}, false, err
		}
		cur.observed = e.GetCursor()
		st, b, err := stateFrom(e.GetState(), l)
		if err != nil {
			return Event{}, false, fmt.Errorf("%w: snapshot of %q: %w", ErrBadEvent, e.GetDocument(), err)
		}
		ev := Event{Kind: SnapshotEvent, Document: e.GetDocument(), Cursor: e.GetCursor(), Root: st.Root,
			CommitView: CommitView{Commit: st.Commit, Encoded: b, Paths: make([][]string, len(st.Commit.Deltas))}}
		switch e.GetReason() {
		case v1.SnapshotReason_SNAPSHOT_REASON_REQUESTED:
			ev.Reason = SnapshotRequested
		case v1.SnapshotReason_SNAPSHOT_REASON_EXPIRED:
			ev.Reason = SnapshotExpired
		case v1.SnapshotReason_SNAPSHOT_REASON_AHEAD:
			ev.Reason = SnapshotAhead
		}
		return ev, true, nil
	case *v1.SubscribeResponse_CaughtUp:
		return Event{Kind: CaughtUpEvent}, true, nil
	}
	return Event{}, false, fmt.Errorf("%w: an event of an unknown kind", ErrBadEvent)
}

func (s *subscription) cursorsLocked(doc string) (*cursors, error) {
	cur := s.docs[doc]
	if cur == nil {
		if len(s.docs) >= MaxResumeDocuments {
			return nil, fmt.Errorf("%w: following %d documents already", ErrTooManyResumed, len(s.docs))
		}
		cur = &cursors{}
		s.docs[doc] = cur
	}
	return cur, nil
}

// applied records that fn accepted ev: a resume starts after it.
func (s *subscription) applied(ev Event) {
	if ev.Kind == CaughtUpEvent {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.docs[ev.Document]
	cur.applied, cur.known = ev.Cursor, true
}

func (s *subscription) setState(st ConnState) {
	s.mu.Lock()
	s.state = st
	s.mu.Unlock()
}

func (s *subscription) exchanged() {
	s.mu.Lock()
	s.state, s.failures = StateConnected, 0
	s.mu.Unlock()
}

func (s *subscription) failed(err error) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures++
	s.lastErr, s.state = err, StateBackoff
	return s.failures
}

func (s *subscription) end(err error) {
	s.mu.Lock()
	s.lastErr, s.state = err, StateClosed
	s.mu.Unlock()
}

func (s *subscription) status() SubscriptionStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := SubscriptionStatus{ID: s.id, Target: s.target, State: s.state, LastError: s.lastErr,
		ConsecutiveFailures: s.failures, Duplicates: s.dups, Documents: make(map[string]Cursors, len(s.docs))}
	for d, cur := range maps.All(s.docs) {
		out.Documents[d] = Cursors{Observed: cur.observed, Applied: cur.applied}
	}
	return out
}
