package client

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Handlers answer the questions of one claim; the kinds claimed are the
// handlers set. Each runs on its own goroutine, at most MaxInFlight at once
// per stream, with a context that ends when the gateway withdraws the
// question, the stream ends or the client closes (and, but for Call, when
// the question's timeout passes). An error, or a panic, answers with a
// Failure: the gateway refuses (accept-threw, a failed open or handshake)
// rather than guess.
type Handlers struct {
	// Accept judges a commit: nil reasons accept it, any reason refuses
	// it with those reasons.
	Accept func(ctx context.Context, q AcceptQuestion) ([]Reason, error)
	// Load gives a document the gateway does not hold: nil says there is
	// none.
	Load func(ctx context.Context, q LoadQuestion) (*Loaded, error)
	// Identify judges a handshake: any reason refuses it (HTTP 401);
	// otherwise the peer is admitted as the identity (nil: anonymous).
	Identify func(ctx context.Context, q IdentifyQuestion) (*Identity, []Reason, error)
	// MayOpen judges an open: any reason refuses it.
	MayOpen func(ctx context.Context, q MayOpenQuestion) ([]Reason, error)
	// Call answers a request-channel call with a JSON result (nil is
	// null). progress sends an interim JSON value to the peer and restarts
	// the gateway's timeout. A *CallError chooses the error the peer sees.
	Call func(ctx context.Context, q CallQuestion, progress func(json.RawMessage) error) (json.RawMessage, error)
	// Timeout is how long the gateway waits for each answer before asking
	// the next claimant; 0 is the gateway's default.
	Timeout time.Duration
	// InlineAccept runs Accept on the stream's receive loop instead of on a
	// goroutine of its own: one hand-off less for every commit judged, for
	// an Accept that never blocks (no I/O, no lock held for long). Such an
	// Accept that does block holds up every question on the stream behind
	// it, and MaxInFlight does not count it.
	InlineAccept bool
}

func (h *Handlers) kinds() []v1.QuestionKind {
	var ks []v1.QuestionKind
	if h.Accept != nil {
		ks = append(ks, v1.QuestionKind_QUESTION_KIND_ACCEPT)
	}
	if h.Load != nil {
		ks = append(ks, v1.QuestionKind_QUESTION_KIND_LOAD)
	}
	if h.Identify != nil {
		ks = append(ks, v1.QuestionKind_QUESTION_KIND_IDENTIFY)
	}
	if h.MayOpen != nil {
		ks = append(ks, v1.QuestionKind_QUESTION_KIND_MAY_OPEN)
	}
	if h.Call != nil {
		ks = append(ks, v1.QuestionKind_QUESTION_KIND_CALL)
	}
	return ks
}

// claim is one claim, across sessions.
type claim struct {
	id      uint64
	pattern Pattern
	h       Handlers

	// Guarded by authority.mu.
	sentOn     *session // the session it was last sent on, nil if none
	granted    bool
	reasons    []Reason
	answered   bool          // its first ClaimResult came
	result     chan error    // the first ClaimResult, cap 1
	released   bool          // Release asked; questions sent before it still get answers
	releasedCh chan struct{} // closed when the release is complete
	dropped    bool          // gone from authority.claims
}

// drop forgets cl and completes its release; a.mu is held.
func (a *authority) drop(cl *claim) {
	if cl.dropped {
		return
	}
	cl.dropped = true
	delete(a.claims, cl.id)
	close(cl.releasedCh)
	a.notifyLocked()
}

func (cl *claim) message() *v1.AuthorityRequest {
	// The SDK reads a commit from its bytes, and needs only the paths
	// besides: the typed deltas would cost both ends for nothing.
	m := &v1.Claim{ClaimId: cl.id, Pattern: patternTo(cl.pattern), Kinds: cl.h.kinds(), CommitView: v1.CommitView_COMMIT_VIEW_ENCODED}
	if cl.h.Timeout > 0 {
		m.Timeout = durationpb.New(cl.h.Timeout)
	}
	return &v1.AuthorityRequest{Message: &v1.AuthorityRequest_Claim{Claim: m}}
}

// Claim is a claim in force. It lasts until Release or Close, across
// reconnects: the SDK claims it again on every new stream.
type Claim struct {
	a  *authority
	cl *claim
}

// ID is the claim's id on the stream (Question.claim_id).
func (c *Claim) ID() uint64 { return c.cl.id }

// Pattern is what was claimed.
func (c *Claim) Pattern() Pattern { return c.cl.pattern }

// Claim makes this backend a claimant for the names p selects and the
// question kinds h has handlers for. It returns when the gateway granted
// the claim, with a *ClaimError when it refused it, or with ctx's error
// (joined with the stream's last error) when no stream answered in time.
func (c *Client) Claim(ctx context.Context, p Pattern, h Handlers) (*Claim, error) {
	if len(p.Name) > MaxPatternBytes {
		return nil, fmt.Errorf("client: a pattern of %d bytes is over the %d-byte bound", len(p.Name), MaxPatternBytes)
	}
	if len(h.kinds()) == 0 {
		return nil, errors.New("client: a claim needs at least one handler")
	}
	if h.Timeout < 0 {
		return nil, errors.New("client: a negative claim timeout")
	}
	a := c.auth
	if err := a.ensure(); err != nil {
		return nil, err
	}
	cl := &claim{pattern: p, h: h, result: make(chan error, 1), releasedCh: make(chan struct{})}
	a.mu.Lock()
	a.nextID++
	cl.id = a.nextID
	a.claims[cl.id] = cl
	s := a.sess
	if s != nil {
		cl.sentOn = s
	}
	a.mu.Unlock()
	if s != nil {
		s.enqueue(ctx, cl.message()) // a session that ends first leaves it to the next
	}
	select {
	case err := <-cl.result:
		if err != nil {
			return nil, err
		}
		return &Claim{a: a, cl: cl}, nil
	case <-ctx.Done():
		a.release(cl)
		a.mu.Lock()
		last := a.lastErr
		a.mu.Unlock()
		return nil, withLast(ctx.Err(), last)
	case <-c.ctx.Done():
		return nil, ErrClosed
	}
}

// Release ends the claim: the gateway sends no further questions for it.
// It waits for the gateway's confirmation (questions sent before it are
// still answered meanwhile), or for ctx, or for the stream to end, which
// ends the claim too.
func (c *Claim) Release(ctx context.Context) error {
	done := c.a.release(c.cl)
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.a.c.ctx.Done():
		return ErrClosed
	}
}

// release marks cl released and sends the Release when a stream holds it;
// the returned channel closes when the release is complete.
func (a *authority) release(cl *claim) <-chan struct{} {
	a.mu.Lock()
	if cl.released {
		a.mu.Unlock()
		return cl.releasedCh
	}
	cl.released = true
	s := cl.sentOn
	if s == nil {
		a.drop(cl)
	}
	a.mu.Unlock()
	if s != nil {
		m := &v1.AuthorityRequest{Message: &v1.AuthorityRequest_Release{Release: &v1.Release{ClaimId: cl.id}}}
		s.enqueue(s.ctx, m) // if the session ends first, disconnected completes the release
	}
	return cl.releasedCh
}

// claimResult records the gateway's answer to a claim sent on s.
func (a *authority) claimResult(s *session, r *v1.ClaimResult) {
	a.mu.Lock()
	defer a.mu.Unlock()
	cl := a.claims[r.GetClaimId()]
	if cl == nil || cl.sentOn != s {
		return
	}
	cl.granted = r.GetGranted()
	cl.reasons = reasonsFrom(r.GetReasons())
	a.notifyLocked()
	if !cl.granted {
		a.c.opts.Logger.Warn("weftgate claim refused", "pattern", cl.pattern.String(), "reasons", joinReasons(cl.reasons))
	}
	if cl.answered {
		return // a re-claim: Status shows the outcome
	}
	cl.answered = true
	if cl.granted {
		cl.result <- nil
		return
	}
	cl.result <- &ClaimError{Pattern: cl.pattern, Reasons: cl.reasons}
	cl.released = true
	a.drop(cl)
}

// released completes a release the gateway confirmed.
func (a *authority) released(s *session, id uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	cl := a.claims[id]
	if cl == nil || cl.sentOn != s || !cl.released {
		return
	}
	a.drop(cl)
}

// handlersFor finds the handlers of a claim sent on s.
func (a *authority) handlersFor(s *session, id uint64) (Handlers, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	cl := a.claims[id]
	if cl == nil || cl.sentOn != s {
		return Handlers{}, false
	}
	return cl.h, true
}

func sortedKeys[V any](m map[uint64]V) []uint64 {
	return slices.SortedFunc(maps.Keys(m), cmp.Compare)
}
