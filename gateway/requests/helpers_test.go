package requests

import (
	"context"
	"sync"
	"testing"
	"time"
)

// sink is a connection's send: it records every message and hands each to
// a channel so tests wait on events, never on time.
type sink struct {
	mu   sync.Mutex
	msgs []string
	ch   chan string
}

func newSink() *sink { return &sink{ch: make(chan string, 1024)} }

func (s *sink) send(b []byte) error {
	s.mu.Lock()
	s.msgs = append(s.msgs, string(b))
	s.mu.Unlock()
	s.ch <- string(b)
	return nil
}

func (s *sink) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.msgs...)
}

// next returns the next message sent; a generous deadline turns a hang
// into a failure instead of a stuck test run.
func (s *sink) next(t *testing.T) string {
	t.Helper()
	select {
	case m := <-s.ch:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message sent")
		return ""
	}
}

func (s *sink) want(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		if got := s.next(t); got != w {
			t.Fatalf("sent\n got %s\nwant %s", got, w)
		}
	}
}

func receive(t *testing.T, c *Channel, msg string) {
	t.Helper()
	if err := c.Handle([]byte(msg)); err != nil {
		t.Fatalf("Handle(%s): %v", msg, err)
	}
}

func ready(t *testing.T, calls Calls, cfg Config) (*Channel, *sink) {
	t.Helper()
	s := newSink()
	c := New(context.Background(), calls, caller, s.send, cfg)
	c.Ready()
	t.Cleanup(c.Close)
	return c, s
}

func wait[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting")
		var zero T
		return zero
	}
}
