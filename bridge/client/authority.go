package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// errStreamEnded is a stream the gateway ended with OK while the client
// still wanted it (the gateway shutting down, say).
var errStreamEnded = errors.New("client: the gateway ended the stream")

// authority owns the authority stream: one session at a time, re-opened
// with backoff, and the claims that outlive sessions.
type authority struct {
	c *Client

	mu       sync.Mutex
	started  bool
	stopping bool
	state    ConnState
	lastErr  error
	failures int
	connects int
	welcome  *v1.Welcome
	limits   Limits
	sess     *session      // the connected session, or nil
	ready    chan struct{} // closed when sess is set; replaced when it ends
	claims   map[uint64]*claim
	nextID   uint64        // claim ids
	changed  chan struct{} // closed and replaced at every change Status shows
}

// notifyLocked wakes whoever waits on Changed; a.mu is held.
func (a *authority) notifyLocked() {
	close(a.changed)
	a.changed = make(chan struct{})
}

func newAuthority(c *Client) *authority {
	return &authority{c: c, ready: make(chan struct{}), claims: map[uint64]*claim{}, changed: make(chan struct{})}
}

// ensure starts the stream's loop the first time something needs it.
func (a *authority) ensure() error {
	a.mu.Lock()
	if a.started {
		a.mu.Unlock()
		return nil
	}
	a.started = true
	a.state = StateConnecting
	a.notifyLocked()
	a.mu.Unlock()
	if !a.c.track() {
		return ErrClosed
	}
	go func() {
		defer a.c.wg.Done()
		a.run(a.c.ctx)
	}()
	return nil
}

// run opens sessions until the client closes, waiting Backoff.Delay between
// failures; a Welcome resets the count.
func (a *authority) run(ctx context.Context) {
	for {
		a.setState(StateConnecting)
		err := a.session(ctx)
		a.mu.Lock()
		if a.stopping || ctx.Err() != nil {
			a.state = StateClosed
			a.notifyLocked()
			a.mu.Unlock()
			return
		}
		a.failures++
		a.lastErr = err
		a.state = StateBackoff
		n := a.failures
		a.notifyLocked()
		a.mu.Unlock()
		d := a.c.opts.Backoff.Delay(n)
		a.c.opts.Logger.Warn("weftgate authority stream ended", "err", err, "failures", n, "retry_in", d)
		select {
		case <-a.c.opts.Clock.After(d):
		case <-ctx.Done():
			a.setState(StateClosed)
			return
		}
	}
}

func (a *authority) setState(s ConnState) {
	a.mu.Lock()
	a.state = s
	a.notifyLocked()
	a.mu.Unlock()
}

// session runs one stream from Hello to its end.
func (a *authority) session(ctx context.Context) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := a.c.svc.Authority(sctx)
	if err != nil {
		return err
	}
	hello := &v1.AuthorityRequest{Message: &v1.AuthorityRequest_Hello{Hello: &v1.Hello{
		Backend: a.c.opts.Backend, MaxInFlight: uint32(a.c.opts.MaxInFlight)}}}
	if err := stream.Send(hello); err != nil {
		_, rerr := stream.Recv() // the stream's status says why
		return endErr(rerr)
	}
	// A gateway that never answers Hello ends the attempt rather than
	// leaving the stream connecting for ever.
	late := time.AfterFunc(WelcomeTimeout, cancel)
	first, err := stream.Recv()
	if !late.Stop() {
		return fmt.Errorf("%w: no Welcome within %v", ErrProtocol, WelcomeTimeout)
	}
	if err != nil {
		return endErr(err)
	}
	w := first.GetWelcome()
	if w == nil {
		return fmt.Errorf("%w: the first message is not a Welcome", ErrProtocol)
	}
	s := newSession(a, stream, sctx, cancel, w)
	var sender sync.WaitGroup
	sender.Add(1)
	go func() {
		defer sender.Done()
		s.sendLoop()
	}()
	for _, m := range a.connected(s, w) {
		if !s.enqueue(sctx, m) {
			break
		}
	}
	err = s.recvLoop()
	a.disconnected(s)
	cancel()
	s.end()
	sender.Wait()
	return err
}

func endErr(err error) error {
	if err == io.EOF {
		return errStreamEnded
	}
	return err
}

// connected makes s the session and returns the claims to send on it.
func (a *authority) connected(s *session, w *v1.Welcome) []*v1.AuthorityRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sess = s
	a.state = StateConnected
	a.failures = 0
	a.connects++
	a.welcome = w
	a.limits = limitsFrom(w.GetLimits())
	close(a.ready)
	a.notifyLocked()
	var out []*v1.AuthorityRequest
	for _, id := range sortedKeys(a.claims) {
		cl := a.claims[id]
		if cl.released {
			continue
		}
		cl.sentOn = s
		out = append(out, cl.message())
	}
	return out
}

// disconnected forgets s: claims wait for the next session, and releases
// that awaited their confirmation are complete (the claim ended with the
// stream).
func (a *authority) disconnected(s *session) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sess == s {
		a.sess = nil
		a.ready = make(chan struct{})
	}
	a.notifyLocked()
	for _, id := range sortedKeys(a.claims) {
		cl := a.claims[id]
		if cl.sentOn != s {
			continue
		}
		cl.sentOn, cl.granted = nil, false // in force again only when re-granted
		if cl.released {
			a.drop(cl)
		}
	}
}

// waitSession returns the connected session, waiting for one.
func (a *authority) waitSession(ctx context.Context) (*session, error) {
	for {
		a.mu.Lock()
		s, ready, lastErr := a.sess, a.ready, a.lastErr
		a.mu.Unlock()
		if s != nil {
			return s, nil
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, withLast(ctx.Err(), lastErr)
		case <-a.c.ctx.Done():
			return nil, ErrClosed
		}
	}
}

// withLast joins a caller's context error with the stream's last error, so
// a caller that gave up learns why the stream was not there.
func withLast(err, last error) error {
	if last == nil {
		return err
	}
	return fmt.Errorf("%w (authority stream: %w)", err, last)
}

// shutdown half-closes the connected session and waits for the gateway to
// end it, at most CloseTimeout.
func (a *authority) shutdown() {
	a.mu.Lock()
	a.stopping = true
	s, started := a.sess, a.started
	a.mu.Unlock()
	if !started {
		return
	}
	if s != nil {
		s.halfClose()
		t := time.NewTimer(a.c.opts.CloseTimeout)
		defer t.Stop()
		select {
		case <-s.done:
		case <-t.C:
		}
	}
}

func (a *authority) status() Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := Status{State: a.state, LastError: a.lastErr, ConsecutiveFailures: a.failures, Connects: a.connects, Limits: a.limits}
	if a.welcome != nil {
		st.StreamID, st.Node = a.welcome.GetStreamId(), a.welcome.GetNode()
	}
	for _, id := range sortedKeys(a.claims) {
		cl := a.claims[id]
		if cl.released {
			continue
		}
		st.Claims = append(st.Claims, ClaimStatus{ID: id, Pattern: cl.pattern, Granted: cl.granted, Reasons: cl.reasons})
	}
	return st
}

func limitsFrom(l *v1.Limits) Limits {
	return Limits{
		MaxInFlight:      int(l.GetMaxInFlight()),
		MaxClaims:        int(l.GetMaxClaims()),
		MaxPendingWrites: int(l.GetMaxPendingWrites()),
		MaxCommitBytes:   int(l.GetMaxCommitBytes()),
		MaxMessageBytes:  int(l.GetMaxMessageBytes()),
		DefaultTimeout:   l.GetDefaultTimeout().AsDuration(),
		MaxTimeout:       l.GetMaxTimeout().AsDuration(),
	}
}
