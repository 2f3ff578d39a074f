package peer

import (
	"errors"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
	"github.com/weftgate/weftgate/protocol/link"
)

// handle carries one link event to its Doc.
func (p *Peer) handle(e link.Event) {
	switch e := e.(type) {
	case link.PeerOpened:
		// Held by the link until we share or join the name; keep its root
		// for a Join. The link bounds how many it holds.
		p.offers[e.Name] = e.Root
	case link.Live:
		if d := p.docs[e.Topic]; d != nil && d.doc != nil {
			p.ready(d) // a Share; a Join is ready when its state arrives
		}
	case link.StateWanted:
		if d := p.docs[e.Topic]; d != nil {
			if b, err := p.stateBytes(d); err != nil {
				p.abandon(d, err)
			} else {
				p.lk.SendState(e.Topic, b)
			}
		}
	case link.StateArrived:
		if d := p.docs[e.Topic]; d != nil {
			p.stateArrived(d, e.State)
		}
	case link.CommitsArrived:
		if d := p.docs[e.Topic]; d != nil {
			p.commitArrived(d, e.Seq, e.Commit)
		}
	case link.PeerRefused:
		if d := p.docs[e.Topic]; d != nil {
			p.emit(d, Refused{Mine: true, Seq: e.Seq, Reasons: e.Reasons, Commit: e.Commit, Undo: e.Undo})
		}
	case link.Ended:
		if e.Topic == 0 {
			delete(p.offers, e.Name)
			return
		}
		if d := p.docs[e.Topic]; d != nil {
			delete(p.docs, e.Topic)
			p.end(d, e.Reason, e.Message, e.ByPeer)
		}
	case link.LinkEnded:
		if p.err == nil {
			p.err = &EndedError{Reason: e.Reason, Message: e.Message, ByPeer: e.ByPeer}
		}
	}
}

// sawOpen notes the root of an open for a name a Join is waiting on, before
// the link takes the frame: the link pairs it but does not report the root.
func (p *Peer) sawOpen(f frame.Frame) {
	for _, d := range p.docs {
		if d.name == f.Name && d.doc == nil {
			d.peerRoot = f.Root
			return
		}
	}
}

func (p *Peer) stateBytes(d *Doc) ([]byte, error) {
	if d.doc == nil {
		return nil, nil // we hold nothing yet, which is what an empty state says
	}
	s := d.doc.Snapshot()
	if len(s.Deltas) == 0 {
		return nil, nil
	}
	// A replica that only ever applied valid commits encodes; if it does
	// not, the topic is left rather than the other end sent a lie.
	return commit.Encode(s)
}

// stateArrived moves the replica to the other end's state, building it
// first for a Join.
func (p *Peer) stateArrived(d *Doc, b []byte) {
	var st commit.Commit
	if b != nil {
		var err error
		if st, err = commit.DecodeWithLimits(b, p.opts.CommitLimits); err != nil {
			p.abandon(d, err)
			return
		}
	}
	fresh := d.doc == nil
	doc := d.doc
	if fresh {
		if d.peerRoot == nil {
			p.abandon(d, protocol.Errorf(protocol.NoDocument, "a state arrived without the other end's root"))
			return
		}
		doc = document.New(d.peerRoot.ID, d.peerRoot.Kind, p.opts.Limits)
	}
	d.mu.Lock()
	defer d.mu.Unlock() // the event goes out before Read sees the change (Doc.Read)
	diff, err := doc.Reconcile(st)
	if err != nil {
		p.abandon(d, err)
		return
	}
	d.doc = doc
	if fresh {
		p.ready(d)
		return
	}
	p.emit(d, StateApplied{Diff: diff})
}

// abandon leaves a topic whose state could not be taken; the Doc ends with
// the reason.
func (p *Peer) abandon(d *Doc, err error) {
	r := protocol.ReasonOf(err)
	if r == "" {
		r = Internal
	}
	d.fail = &EndedError{Name: d.name, Reason: r, Message: err.Error()}
	p.lk.Leave(d.topic)
}

// commitArrived decodes, judges and applies one commit from the other end.
func (p *Peer) commitArrived(d *Doc, seq uint64, b []byte) {
	if d.doc == nil {
		// A Join still waiting for its state: the state, computed when it
		// is answered, covers every commit sent before it.
		return
	}
	c, err := commit.DecodeWithLimits(b, p.opts.CommitLimits)
	if err != nil {
		p.refuse(d, seq, b, []frame.Reason{reasonOf(err)})
		return
	}
	if p.opts.Accept != nil {
		if rs := p.opts.Accept(d.name, d.doc, c); len(rs) > 0 {
			p.refuse(d, seq, b, rs)
			return
		}
	}
	d.mu.Lock()
	err = d.doc.Update(c)
	if err == nil {
		p.emit(d, Applied{Seq: seq, Commit: c}) // before Read sees it (Doc.Read)
	}
	d.mu.Unlock()
	if err != nil {
		var rf *document.Refusal
		if errors.As(err, &rf) {
			rs := make([]frame.Reason, len(rf.Reasons))
			for i, e := range rf.Reasons {
				rs[i] = frame.Reason{Code: string(e.Reason), Message: e.Message, Path: e.Path}
			}
			p.refuse(d, seq, b, rs)
			return
		}
		p.refuse(d, seq, b, []frame.Reason{reasonOf(err)})
	}
}

func reasonOf(err error) frame.Reason {
	r := protocol.ReasonOf(err)
	if r == "" {
		r = Internal
	}
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return frame.Reason{Code: string(r), Message: pe.Message, Path: pe.Path}
	}
	return frame.Reason{Code: string(r), Message: err.Error()}
}

func (p *Peer) refuse(d *Doc, seq uint64, b []byte, rs []frame.Reason) {
	if err := p.lk.Refuse(d.topic, seq, rs); err != nil {
		// Reasons the link will not carry (an Accept's text that is not
		// UTF-8): refuse with that instead, never let the commit pass.
		rs = []frame.Reason{{Code: string(Internal), Message: err.Error()}}
		p.lk.Refuse(d.topic, seq, rs)
	}
	p.emit(d, Refused{Seq: seq, Reasons: rs, Commit: b})
}

// emit delivers e, or counts it when the channel is full.
func (p *Peer) emit(d *Doc, e Event) {
	select {
	case d.events <- e:
	default:
		d.missed.Add(1)
	}
}

// ready marks d usable: a Join's replica exists, or a Share went live.
func (p *Peer) ready(d *Doc) {
	if d.readied || d.ended {
		return
	}
	d.readied = true
	close(d.ready)
}

// end finishes d after the link ended its topic.
func (p *Peer) end(d *Doc, r protocol.Reason, msg string, byPeer bool) {
	if d.ended {
		return
	}
	d.ended = true
	e := &EndedError{Name: d.name, Reason: r, Message: msg, ByPeer: byPeer}
	var le *EndedError
	switch {
	case d.fail != nil:
		e = d.fail
	case r == link.Closed && errors.As(p.err, &le):
		// The link ended for a reason of this end's (the socket, the
		// backlog): the document ended for the same one.
		e.Reason, e.Message, e.ByPeer = le.Reason, le.Message, le.ByPeer
	}
	var err error = e
	if r == link.Closed && errors.Is(p.err, ErrClosed) {
		err, e.Message = ErrClosed, "closed by this end"
	}
	d.err = err
	if !d.readied {
		d.readyErr = err
		close(d.ready)
	}
	p.emit(d, Ended{Reason: e.Reason, Message: e.Message, ByPeer: e.ByPeer})
	close(d.events)
	close(d.done)
}
