package requests

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
)

// Defaults for Config.
const (
	// DefaultMaxInFlight calls per socket, held (before Ready) or running.
	DefaultMaxInFlight = 32
	// DefaultMaxMessageBytes matches the JS server's maxPayload (1 MiB).
	DefaultMaxMessageBytes = 1 << 20
)

// ErrClosed is Handle after Close: the message is dropped, and as the
// socket is ending anyway it is not a violation.
var ErrClosed = errors.New("requests: channel closed")

// Config bounds a Channel; the zero value uses the defaults.
type Config struct {
	MaxInFlight     int
	MaxMessageBytes int
}

// Channel is the request channel of one socket. Handle, Ready and Close
// may be called from any goroutine.
type Channel struct {
	calls  Calls
	caller Caller
	cfg    Config

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // one per running call

	mu       sync.Mutex
	ready    bool
	closed   bool
	inFlight int    // held + running
	held     []Call // received before Ready, in order

	sendMu     sync.Mutex // one send at a time; guards sendClosed
	sendClosed bool
	send       func([]byte) error
}

// NewChannel is New with a background context and the default Config.
func NewChannel(calls Calls, caller Caller, send func([]byte) error) *Channel {
	return New(context.Background(), calls, caller, send, Config{})
}

// New returns the channel of one socket. Calls go to calls (nil answers
// every call "missing") as from caller, under a context derived from ctx.
// send writes one text message to the socket; the channel calls it from
// several goroutines but never concurrently, and it must not block for
// long (a bounded queue that fails when full suits): a failed send is the
// connection's to act on, and the answer is lost with the socket.
func New(ctx context.Context, calls Calls, caller Caller, send func([]byte) error, cfg Config) *Channel {
	if calls == nil {
		calls = Missing{}
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	c := &Channel{calls: calls, caller: caller, cfg: cfg, send: send}
	c.ctx, c.cancel = context.WithCancel(ctx)
	return c
}

// Handle takes one text message from the socket. A *Violation (see
// ErrViolation) means the caller must close the socket. An answer is
// dropped: this end asks nothing, so nothing waits for it. A request past
// MaxInFlight is answered "busy" at once, even before Ready, since holding
// it would be unbounded.
func (c *Channel) Handle(b []byte) error {
	if len(b) > c.cfg.MaxMessageBytes {
		return violation(TooLarge)
	}
	m, err := Parse(b)
	if err != nil {
		return err
	}
	if m.Kind != KindRequest {
		return nil
	}
	call := Call{ID: m.ID, Name: m.Name, Args: m.Args, Caller: c.caller}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	if c.inFlight >= c.cfg.MaxInFlight {
		c.mu.Unlock()
		c.write(EncodeError(m.ID, busy))
		return nil
	}
	c.inFlight++
	if c.ready {
		c.start(call)
	} else {
		c.held = append(c.held, call)
	}
	c.mu.Unlock()
	return nil
}

// Ready lets calls run: the gateway calls it once its connection set-up
// is done, and requests held until then start in arrival order.
func (c *Channel) Ready() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ready || c.closed {
		return
	}
	c.ready = true
	for _, call := range c.held {
		c.start(call)
	}
	c.held = nil
}

// Close ends the channel with its socket: held calls never run, running
// ones see their context end, and no answer is sent after Close returns
// ("closed" needs no message: the socket is gone). It waits for every call
// to return. Close is idempotent.
func (c *Channel) Close() {
	c.mu.Lock()
	c.closed = true
	c.held = nil
	c.mu.Unlock()
	c.cancel()
	c.sendMu.Lock()
	c.sendClosed = true
	c.sendMu.Unlock()
	c.wg.Wait()
}

// start runs call on its own goroutine; c.mu is held.
func (c *Channel) start(call Call) {
	c.wg.Add(1)
	go c.run(call)
}

func (c *Channel) run(call Call) {
	defer c.wg.Done()
	var (
		mu       sync.Mutex
		answered bool
	)
	progress := func(v json.RawMessage) {
		mu.Lock()
		defer mu.Unlock()
		if answered || c.ctx.Err() != nil {
			return
		}
		if b, err := EncodeProgress(call.ID, v); err == nil {
			c.write(b)
		}
	}
	res, err := c.invoke(call, progress)
	mu.Lock()
	answered = true // progress now drops, and any in flight was written first
	mu.Unlock()

	var out []byte
	if err == nil {
		out, err = EncodeResult(call.ID, res)
	}
	if err != nil {
		out = EncodeError(call.ID, errorFor(call.Name, err))
	}
	// Free the slot before answering, so a client that waits for an answer
	// before asking again is never told "busy".
	c.mu.Lock()
	c.inFlight--
	c.mu.Unlock()
	if c.ctx.Err() != nil {
		return // closed: the socket is gone
	}
	c.write(out)
}

// invoke calls Calls, turning a panic into a plain failure: the module's
// defect is answered "failed", as a throw is in JS.
func (c *Channel) invoke(call Call, progress func(json.RawMessage)) (res json.RawMessage, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, errPanicked
		}
	}()
	return c.calls.Call(c.ctx, call, progress)
}

var errPanicked = errors.New("requests: the call panicked")

// write sends b unless the channel is closed.
func (c *Channel) write(b []byte) {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if c.sendClosed {
		return
	}
	_ = c.send(b) // a failing socket is the connection's to close
}
