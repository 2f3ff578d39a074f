package peer

import (
	"fmt"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/frame"
	"github.com/weftgate/weftgate/protocol/link"
)

// loop is the goroutine that owns the link, the replicas and the backlog.
// It never blocks on the socket: the writer takes the backlog one message
// at a time while the loop goes on taking inputs.
func (p *Peer) loop() {
	for !p.lk.Closed() {
		var wr chan []byte
		var next []byte
		if len(p.backlog) > 0 {
			wr, next = p.wr, p.backlog[0]
		}
		select {
		case in := <-p.in:
			p.receive(in)
		case fn := <-p.calls:
			fn()
		case wr <- next:
			p.backlog[0] = nil
			p.backlog = p.backlog[1:]
			p.pending -= len(next)
		case <-p.closing:
			if p.err == nil {
				p.err = ErrClosed
			}
			p.lk.Close()
		}
		p.pump()
	}
	p.finish()
}

// receive steps the link with one input from the reader.
func (p *Peer) receive(in input) {
	switch {
	case in.undecodable:
		// Bytes that are not a value end the link without a word; the
		// reason is the byte-level one (truncated, trailing-bytes, ...).
		p.code, p.why = websocket.StatusInvalidFramePayloadData, "not a frame"
		p.endLink(&EndedError{Reason: protocol.ReasonOf(in.end), Message: in.end.Error(), ByPeer: true})
	case in.end != nil:
		p.endLink(&EndedError{Reason: link.Closed, Message: in.end.Error(), ByPeer: true})
	case in.bad != nil:
		p.lk.BadFrame(in.bad.Topic, in.bad.Message)
		if p.lk.Closed() {
			p.code, p.why = websocket.StatusPolicyViolation, string(protocol.BadFrame)
		}
	default:
		if in.f.Kind == frame.Open {
			p.sawOpen(in.f)
		}
		p.lk.Receive(in.f)
	}
}

// endLink ends the link for a reason the link itself does not see (the
// transport, the backlog), unless it has already ended.
func (p *Peer) endLink(e error) {
	if p.err == nil {
		p.err = e
	}
	p.lk.Close()
}

// pump carries the link's outputs out: frames onto the backlog, events to
// the Docs. Events may make more frames (a state, a refusal), so it goes
// round until both are empty.
func (p *Peer) pump() {
	for {
		fs := p.lk.Flush()
		ev := p.lk.Events()
		if len(fs) == 0 && len(ev) == 0 {
			return
		}
		for _, f := range fs {
			p.queue(f)
		}
		p.lk.Recycle(fs) // encoded onto the backlog: the link may reuse them
		for _, e := range ev {
			p.handle(e)
		}
	}
}

func (p *Peer) queue(f frame.Frame) {
	if p.dropping {
		return // the link is ending because the socket failed or fell behind
	}
	b, err := frame.Encode(f)
	if err != nil {
		p.drop()
		p.code, p.why = websocket.StatusInternalError, string(Internal)
		p.endLink(&EndedError{Reason: Internal, Message: fmt.Sprintf("a %s frame did not encode: %v", f.Kind, err)})
		return
	}
	if p.pending+len(b) > p.opts.MaxBacklogBytes {
		p.drop()
		p.code, p.why = websocket.StatusPolicyViolation, string(SlowConsumer)
		p.endLink(&EndedError{Reason: SlowConsumer, Message: fmt.Sprintf(
			"more than %d bytes of frames are waiting for the socket", p.opts.MaxBacklogBytes)})
		return
	}
	p.backlog = append(p.backlog, b)
	p.pending += len(b)
}

// drop forgets the backlog: the link is ending and what waits will not be
// written.
func (p *Peer) drop() {
	p.backlog, p.pending, p.dropping = nil, 0, true
}

// finish runs once the link has ended: it stops inputs and calls, hands the
// backlog to the writer, which writes it and closes the socket, and waits
// for the reader, which the closed socket ends.
func (p *Peer) finish() {
	if p.err == nil {
		p.err = &EndedError{Reason: link.Closed, Message: "the link ended"}
	}
	close(p.quit)
	for _, b := range p.backlog {
		p.wr <- b
	}
	p.backlog = nil
	close(p.wr)
	p.io.Wait()
	close(p.done)
}
