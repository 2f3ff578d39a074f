package peer

import (
	"context"
	"errors"
	"fmt"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Join opens name holding nothing and asking for the other end's state, and
// returns once that state has built the replica. When ctx ends first the
// topic is left and ctx's error returned; when the other end holds nothing
// either, the error has reason no-document.
func (p *Peer) Join(ctx context.Context, name string) (*Doc, error) {
	d := newDoc(p, name, nil)
	var err error
	if e := p.do(ctx, func() { err = p.share(d, nil) }); e != nil {
		return nil, e
	}
	if err != nil {
		return nil, err
	}
	return p.await(ctx, d)
}

// Share shares doc under name and returns once the other end has opened it
// too, so commits flow. From then on the peer owns doc: read it through the
// Doc, and change it only with Doc.Commit. When ctx ends first the topic is
// left and ctx's error returned.
func (p *Peer) Share(ctx context.Context, name string, doc *document.Document) (*Doc, error) {
	if doc == nil {
		return nil, errors.New("peer: Share needs a document; Join opens a name holding nothing")
	}
	d := newDoc(p, name, doc)
	id, kind := doc.Root()
	var err error
	if e := p.do(ctx, func() { err = p.share(d, &frame.Root{ID: id, Kind: kind}) }); e != nil {
		return nil, e
	}
	if err != nil {
		return nil, err
	}
	return p.await(ctx, d)
}

// await waits for d to be ready or to end.
func (p *Peer) await(ctx context.Context, d *Doc) (*Doc, error) {
	select {
	case <-d.ready:
		if d.readyErr != nil {
			return nil, d.readyErr
		}
		return d, nil
	case <-ctx.Done():
	}
	p.do(context.Background(), func() {
		if !d.readied && !d.ended {
			p.leave(d)
		}
	})
	// Leaving ended it, or it got ready first; ready is closed either way
	// (an ended link ends every Doc before it stops).
	<-d.ready
	if d.readyErr == nil {
		return d, nil // ready just in time: hand it over rather than leak it
	}
	return nil, ctx.Err()
}

// share runs on the loop: it opens d's topic on the link.
func (p *Peer) share(d *Doc, root *frame.Root) error {
	// An offer is the other end's open from before we shared the name: its
	// root is the one a Join builds on. Share answers it either way.
	offer := p.offers[d.name]
	topic, err := p.lk.Share(d.name, root, root == nil)
	if err != nil {
		if r := protocol.ReasonOf(err); r == protocol.RootMismatch || r == protocol.NoDocument {
			delete(p.offers, d.name) // the link answered the offer with a fault
		}
		return err
	}
	delete(p.offers, d.name)
	d.topic, d.peerRoot = topic, offer
	p.docs[topic] = d
	return nil
}

// commit runs on the loop: apply, then send with the undo, or roll back.
func (p *Peer) commit(d *Doc, deltas []commit.Delta) (uint64, error) {
	if d.ended {
		return 0, d.err
	}
	c := commit.Commit{Deltas: append([]commit.Delta(nil), deltas...)}
	b, err := commit.Encode(c)
	if err != nil {
		return 0, err
	}
	d.mu.Lock()
	undo, err := d.doc.Apply(c)
	d.mu.Unlock()
	if err != nil {
		return 0, err
	}
	ub, err := commit.Encode(undo)
	if err == nil {
		var seq uint64
		if seq, err = p.lk.Send(d.topic, b, ub); err == nil {
			return seq, nil
		}
	}
	d.mu.Lock()
	rerr := d.doc.Update(undo)
	d.mu.Unlock()
	if rerr != nil {
		// An inverse that does not apply is a document defect; say both.
		return 0, fmt.Errorf("%w (and its undo did not apply: %v)", err, rerr)
	}
	return 0, err
}

func (p *Peer) resync(d *Doc) error {
	if d.ended {
		return d.err
	}
	return p.lk.Resync(d.topic)
}

func (p *Peer) leave(d *Doc) error {
	if d.ended {
		return d.err
	}
	return p.lk.Leave(d.topic)
}
