package peer

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/protocol/frame"
	"github.com/weftgate/weftgate/protocol/link"
)

// Peer is one end of one link over one WebSocket. Its methods are safe for
// concurrent use.
type Peer struct {
	opts Options
	conn *websocket.Conn

	// Owned by the loop goroutine.
	lk       *link.Link
	docs     map[uint64]*Doc        // by our topic number
	offers   map[string]*frame.Root // roots of peer opens the link holds, by name
	backlog  [][]byte
	pending  int                  // bytes in backlog
	dropping bool                 // the backlog is dropped: the link is ending
	code     websocket.StatusCode // how the writer closes the socket
	why      string

	calls   chan func()
	in      chan input
	wr      chan []byte
	closing chan struct{} // closed by Close
	quit    chan struct{} // closed when the link ended: no more inputs or calls
	done    chan struct{} // closed when every goroutine has returned
	err     error         // why the link ended; written before quit closes
	once    sync.Once

	io sync.WaitGroup // the reader and the writer
}

// input is what the reader hands the loop: a frame, a value that was not a
// frame, or the end of the transport.
type input struct {
	f   frame.Frame
	bad *frame.BadFrameError
	end error // the socket ended or a message was not a value
	// undecodable is set when end is bytes that were not a value.
	undecodable bool
}

// Dial opens a WebSocket to url and starts a link over it. ctx bounds the
// handshake only; the link lives until Close or until it ends.
func Dial(ctx context.Context, url string, opts Options) (*Peer, error) {
	opts = opts.withDefaults()
	conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPClient:      opts.HTTPClient,
		HTTPHeader:      opts.Header,
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		he := &HandshakeError{Err: err}
		if resp != nil {
			he.StatusCode, he.Header = resp.StatusCode, resp.Header
			if resp.Body != nil {
				he.Body, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<10))
				resp.Body.Close()
			}
		}
		return nil, he
	}
	conn.SetReadLimit(opts.MaxMessageBytes)
	p := &Peer{
		opts:    opts,
		conn:    conn,
		lk:      link.New(opts.Link),
		docs:    make(map[uint64]*Doc),
		offers:  make(map[string]*frame.Root),
		code:    websocket.StatusNormalClosure,
		calls:   make(chan func()),
		in:      make(chan input, inputQueue),
		wr:      make(chan []byte),
		closing: make(chan struct{}),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	p.io.Add(2)
	go p.read()
	go p.write()
	go p.loop()
	return p, nil
}

// Close ends the link: frames already made are written, every Doc ends with
// reason closed, and the socket closes with 1000. It waits for every
// goroutine of the peer and returns nil, or why the link had already ended.
func (p *Peer) Close() error {
	p.once.Do(func() { close(p.closing) })
	<-p.done
	if errors.Is(p.err, ErrClosed) {
		return nil
	}
	return p.err
}

// Done is closed when the link has ended and the peer's goroutines returned.
func (p *Peer) Done() <-chan struct{} { return p.done }

// Err is why the link ended: ErrClosed after Close, an *EndedError
// otherwise, nil while it is up.
func (p *Peer) Err() error {
	select {
	case <-p.quit:
		return p.err
	default:
		return nil
	}
}

// do runs fn on the loop goroutine and waits for it. It fails when the link
// has ended or ctx ends first.
func (p *Peer) do(ctx context.Context, fn func()) error {
	ran := make(chan struct{})
	select {
	case p.calls <- func() { fn(); close(ran) }:
	case <-p.quit:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
	<-ran // the loop runs what it took before anything else
	return nil
}
