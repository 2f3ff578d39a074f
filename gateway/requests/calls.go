package requests

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/weftgate/weftgate/gateway/admission"
)

// Call is one request as the gateway routes it, with who sent it.
type Call struct {
	ID   int64
	Name string
	Args json.RawMessage // never empty: "null" when the request had none
	Caller
}

// Caller is the connection a channel's calls come on.
type Caller struct {
	Identity admission.Identity
	// Link is the connection's id ("c7") and RemoteAddr the peer's
	// address as admission saw it; empty when the caller named none.
	Link       string
	RemoteAddr string
}

// Calls answers requests. It returns the result as JSON (nil is null) or an
// error: a *admission.Refusal (answered "refused" with its reasons), a
// *Failure ("failed" with its message and reasons), ErrMissing ("missing"),
// ErrNotData ("not-data"), or anything else
// ("failed", message "the call failed"; the text is never sent). progress
// sends a progress report; reports after Call returns are dropped, and so
// is one that is not JSON. Call must return soon after ctx ends: the
// socket is gone and Channel.Close waits for it.
type Calls interface {
	Call(ctx context.Context, c Call, progress func(json.RawMessage)) (json.RawMessage, error)
}

// CallsFunc adapts a function to Calls.
type CallsFunc func(ctx context.Context, c Call, progress func(json.RawMessage)) (json.RawMessage, error)

// Call calls f.
func (f CallsFunc) Call(ctx context.Context, c Call, progress func(json.RawMessage)) (json.RawMessage, error) {
	return f(ctx, c, progress)
}

// Missing answers every call "missing": the default Calls.
type Missing struct{}

// Call returns ErrMissing.
func (Missing) Call(context.Context, Call, func(json.RawMessage)) (json.RawMessage, error) {
	return nil, ErrMissing
}

// Responder is how a Handler reports progress with Go values.
type Responder interface {
	// Progress sends v (marshalled as JSON) before the result. It returns
	// ErrNotData, sending nothing, when v cannot be marshalled.
	Progress(v any) error
}

// Handler is a Calls written with Go values: its result is marshalled as
// JSON (nil is null), and one that cannot be is answered "not-data".
type Handler func(ctx context.Context, c Call, r Responder) (any, error)

// Call runs h and marshals its result.
func (h Handler) Call(ctx context.Context, c Call, progress func(json.RawMessage)) (json.RawMessage, error) {
	v, err := h(ctx, c, responder(progress))
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotData, err)
	}
	return b, nil
}

type responder func(json.RawMessage)

func (r responder) Progress(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotData, err)
	}
	r(b)
	return nil
}

// Mux routes calls by exact name; an unknown name is ErrMissing.
type Mux struct {
	mu    sync.RWMutex
	calls map[string]Calls
}

// Handle routes name to c, replacing any earlier route.
func (m *Mux) Handle(name string, c Calls) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.calls == nil {
		m.calls = make(map[string]Calls)
	}
	m.calls[name] = c
}

// Call routes c by its name.
func (m *Mux) Call(ctx context.Context, c Call, progress func(json.RawMessage)) (json.RawMessage, error) {
	m.mu.RLock()
	h, ok := m.calls[c.Name]
	m.mu.RUnlock()
	if !ok {
		return nil, ErrMissing
	}
	return h.Call(ctx, c, progress)
}
