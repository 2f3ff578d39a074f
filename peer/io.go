package peer

import (
	"context"
	"errors"
	"time"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/internal/wsread"
	"github.com/weftgate/weftgate/protocol/frame"
)

// read is the reader goroutine: one binary message is one frame. Reads and
// writes take no context: the closed socket ends them (finish closes it
// before it waits), and coder/websocket arms a context.AfterFunc for each
// call whose context can end, about 4% of all CPU in the authority load run.
func (p *Peer) read() {
	defer p.io.Done()
	for {
		typ, b, err := wsread.Read(context.Background(), p.conn)
		if err != nil {
			p.hand(input{end: err})
			return
		}
		if typ != websocket.MessageBinary {
			continue // the request channel's, which this end does not speak
		}
		f, err := frame.Decode(b)
		var bad *frame.BadFrameError
		switch {
		case errors.As(err, &bad):
			if !p.hand(input{bad: bad}) {
				return
			}
		case err != nil:
			p.hand(input{end: err, undecodable: true})
			return
		default:
			if !p.hand(input{f: f}) {
				return
			}
		}
	}
}

// hand gives in to the loop, or reports false when the loop has stopped.
func (p *Peer) hand(in input) bool {
	select {
	case p.in <- in:
		return true
	case <-p.quit:
		return false
	}
}

// write is the writer goroutine: it alone writes the socket, in the order
// the loop hands it messages, then closes the socket when the loop closes wr.
func (p *Peer) write() {
	defer p.io.Done()
	failed := false
	// One timer, reset for each write, bounds it: a context per write was a
	// sixth of the writer's cost. When it fires it closes the socket, which
	// fails the write.
	guard := time.AfterFunc(time.Hour, func() { p.conn.CloseNow() })
	guard.Stop()
	defer guard.Stop()
	for msg := range p.wr {
		if failed {
			continue // the socket is gone; drain so the loop never waits
		}
		guard.Reset(p.opts.WriteTimeout)
		err := p.conn.Write(context.Background(), websocket.MessageBinary, msg)
		if !guard.Stop() && err == nil {
			err = context.DeadlineExceeded // it fired as the write ended; the socket is closed
		}
		if err != nil {
			// The reader sees the socket end and tells the loop.
			p.conn.CloseNow()
			failed = true
		}
	}
	if !failed {
		// code and why were written by the loop before it closed wr.
		p.conn.Close(p.code, p.why)
	}
}
