package client

import (
	"context"
	"errors"
	"testing"
	"time"
)

// closesSoon fails t unless ch closes within a bound far above any
// deadline these tests set.
func closesSoon(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal(what)
	}
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A handler's context ends at the question's deadline, whether the handler
// waits on Done or only asks Err.
func TestQuestionContextDeadline(t *testing.T) {
	var waits questionCtx
	waits.start(context.Background(), 20*time.Millisecond)
	if d, ok := waits.Deadline(); !ok || time.Until(d) > 20*time.Millisecond {
		t.Fatalf("deadline %v %v", d, ok)
	}
	if waits.Err() != nil {
		t.Fatal("ended before its deadline")
	}
	closesSoon(t, waits.Done(), "Done never closed after the deadline")
	if !errors.Is(waits.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err %v, want DeadlineExceeded", waits.Err())
	}

	// The session's context is a cancelCtx; Cause must still say why this
	// one ended.
	session, cancel := context.WithCancel(context.Background())
	defer cancel()
	var asks questionCtx
	asks.start(session, time.Nanosecond)
	for asks.Err() == nil { // the clock alone ends it
	}
	if !errors.Is(asks.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err %v, want DeadlineExceeded", asks.Err())
	}
	if cause := context.Cause(&asks); !errors.Is(cause, context.DeadlineExceeded) {
		t.Fatalf("Cause %v, want DeadlineExceeded", cause)
	}
	if !closed(asks.Done()) {
		t.Fatal("Done asked for after the deadline is not closed")
	}
}

// Answered or withdrawn, it is canceled; a later Done is closed; the first
// end wins.
func TestQuestionContextCancel(t *testing.T) {
	session, cancel := context.WithCancel(context.Background())
	defer cancel()
	var c questionCtx
	c.start(session, 0)
	if _, ok := c.Deadline(); ok {
		t.Fatal("a deadline without a timeout")
	}
	done := c.Done()
	c.cancel(context.Canceled)
	c.cancel(context.DeadlineExceeded)
	if !closed(done) || !errors.Is(c.Err(), context.Canceled) || !errors.Is(context.Cause(&c), context.Canceled) {
		t.Fatalf("after cancel: closed %v, Err %v, Cause %v", closed(done), c.Err(), context.Cause(&c))
	}
	if c.Done() != done {
		t.Fatal("Done changed")
	}
	var late questionCtx
	late.start(context.Background(), time.Hour)
	late.cancel(context.Canceled)
	if !closed(late.Done()) {
		t.Fatal("Done asked for after cancel is not closed")
	}
}

// The session's end ends it, asked for Done before or after.
func TestQuestionContextFollowsTheSession(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	var before, after questionCtx
	before.start(parent, time.Hour)
	after.start(parent, time.Hour)
	done := before.Done()
	cancel()
	closesSoon(t, done, "Done never closed after the session ended")
	if !errors.Is(before.Err(), context.Canceled) || !errors.Is(after.Err(), context.Canceled) {
		t.Fatalf("Err %v and %v, want Canceled", before.Err(), after.Err())
	}
	if !closed(after.Done()) {
		t.Fatal("Done asked for after the session ended is not closed")
	}
}

// A context derived from a handler's ends with it, as from any context.
func TestQuestionContextChildren(t *testing.T) {
	var c questionCtx
	c.start(context.Background(), time.Hour)
	child, cancel := context.WithTimeout(&c, time.Hour)
	defer cancel()
	c.cancel(context.Canceled)
	closesSoon(t, child.Done(), "a child outlived its handler's context")
	if !errors.Is(child.Err(), context.Canceled) {
		t.Fatalf("child Err %v, want Canceled", child.Err())
	}
}
