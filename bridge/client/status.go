package client

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// ConnState is where a stream is in its life.
type ConnState uint8

const (
	// StateIdle: not needed yet (no claim or stream write so far).
	StateIdle ConnState = iota
	// StateConnecting: opening the stream, before the gateway's first answer.
	StateConnecting
	// StateConnected: the stream is open and answered.
	StateConnected
	// StateBackoff: the stream failed and waits before the next attempt.
	StateBackoff
	// StateClosed: ended for good.
	StateClosed
)

func (s ConnState) String() string {
	switch s {
	case StateIdle:
		return "idle"
	case StateConnecting:
		return "connecting"
	case StateConnected:
		return "connected"
	case StateBackoff:
		return "backoff"
	case StateClosed:
		return "closed"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Limits are the gateway's bounds for the authority stream (Welcome.limits).
type Limits struct {
	MaxInFlight      int
	MaxClaims        int
	MaxPendingWrites int
	MaxCommitBytes   int
	MaxMessageBytes  int
	DefaultTimeout   time.Duration
	MaxTimeout       time.Duration
}

// Status is a snapshot of the client's streams.
type Status struct {
	// State is the authority stream's.
	State ConnState
	// Transport is the gRPC connection's state ("READY", ...).
	Transport string
	// StreamID and Node are the current stream's Welcome; Limits its limits.
	StreamID uint64
	Node     string
	Limits   Limits
	// LastError is why the authority stream last ended; nil if it never did.
	LastError error
	// ConsecutiveFailures counts stream ends since the last Welcome.
	ConsecutiveFailures int
	// Connects counts Welcomes received.
	Connects int
	Claims   []ClaimStatus
	// Subscriptions are the Subscribe calls running, by ID.
	Subscriptions []SubscriptionStatus
}

// ClaimStatus is one claim in force or being claimed.
type ClaimStatus struct {
	ID      uint64
	Pattern Pattern
	// Granted says the claim is in force on the current stream: false
	// while the stream is down or the re-claim is unanswered. Reasons say
	// why the last ClaimResult refused it.
	Granted bool
	Reasons []Reason
}

// SubscriptionStatus is one running Subscribe.
type SubscriptionStatus struct {
	ID uint64
	// Target is the document's name, or the pattern's text.
	Target              string
	State               ConnState
	LastError           error
	ConsecutiveFailures int
	// Documents holds each followed document's cursors.
	Documents map[string]Cursors
	// Duplicates counts commit events dropped because fn had them already.
	Duplicates int
}

// Cursors are one document's position in a subscription.
type Cursors struct {
	// Observed is the highest cursor the gateway sent.
	Observed uint64
	// Applied is the last cursor the callback accepted: where a resume
	// starts from.
	Applied uint64
}

// Status reports the client's streams as they are now.
func (c *Client) Status() Status {
	s := c.auth.status()
	s.Transport = c.cc.GetState().String()
	s.Subscriptions = c.subs.status()
	return s
}

// Changed returns a channel closed at the authority stream's next change
// of state, connection or claims. Take it before reading Status, then wait
// on it, to wait for a condition without polling.
func (c *Client) Changed() <-chan struct{} {
	c.auth.mu.Lock()
	defer c.auth.mu.Unlock()
	return c.auth.changed
}

type subscriptions struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]*subscription
}

func (ss *subscriptions) add(s *subscription) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.next++
	s.id = ss.next
	ss.m[s.id] = s
}

func (ss *subscriptions) remove(s *subscription) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.m, s.id)
}

func (ss *subscriptions) status() []SubscriptionStatus {
	ss.mu.Lock()
	subs := slices.Collect(maps.Values(ss.m))
	ss.mu.Unlock()
	out := make([]SubscriptionStatus, 0, len(subs))
	for _, s := range subs {
		out = append(out, s.status())
	}
	slices.SortFunc(out, func(a, b SubscriptionStatus) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
