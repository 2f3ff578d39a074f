package client

import (
	"context"
	"sync"
	"time"
)

// questionCtx is a handler's context. It ends when its question is
// answered or withdrawn, when the session ends, or at the question's
// deadline. A context.WithTimeout per question cost a runtime timer, three
// allocations and a registration with the session's context, about 5% of
// the SDK's CPU under load; this lives inside the question's inflight entry
// and arms a timer only for a handler that waits on Done.
type questionCtx struct {
	parent   context.Context // the session's
	deadline time.Time       // zero: none

	mu    sync.Mutex
	err   error
	done  chan struct{} // made by the first Done
	timer *time.Timer   // the deadline, once Done was asked for
	stop  func() bool   // the session's AfterFunc, once Done was asked for
}

func (c *questionCtx) start(parent context.Context, timeout time.Duration) {
	c.parent = parent
	if timeout > 0 {
		c.deadline = time.Now().Add(timeout)
	}
}

func (c *questionCtx) Deadline() (time.Time, bool) { return c.deadline, !c.deadline.IsZero() }

func (c *questionCtx) Value(key any) any { return c.parent.Value(key) }

func (c *questionCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errLocked()
}

func (c *questionCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return c.done
	}
	c.done = make(chan struct{})
	switch {
	case c.err != nil:
		close(c.done)
	case c.errLocked() != nil: // ended now, which closed done
	default:
		if !c.deadline.IsZero() {
			c.timer = time.AfterFunc(time.Until(c.deadline), func() { c.cancel(context.DeadlineExceeded) })
		}
		c.stop = context.AfterFunc(c.parent, func() { c.cancel(context.Canceled) })
	}
	return c.done
}

// cancel ends the context with err unless it has ended already.
func (c *questionCtx) cancel(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.endLocked(err)
	}
	c.mu.Unlock()
}

// errLocked is the context's error, settling it first from the session and
// the clock: with no Done asked for, nothing else watches them.
func (c *questionCtx) errLocked() error {
	if c.err == nil {
		switch {
		case c.parent.Err() != nil:
			c.endLocked(context.Canceled)
		case !c.deadline.IsZero() && !time.Now().Before(c.deadline):
			c.endLocked(context.DeadlineExceeded)
		}
	}
	return c.err
}

func (c *questionCtx) endLocked(err error) {
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.stop != nil {
		c.stop()
	}
}
