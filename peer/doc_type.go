package peer

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Doc is one document shared over the peer's link. Its methods are safe for
// concurrent use.
type Doc struct {
	p     *Peer
	name  string
	topic uint64

	mu  sync.Mutex         // guards doc: the loop writes under it, readers read
	doc *document.Document // nil until a Join's state arrives

	// Owned by the loop.
	peerRoot *frame.Root // the other end's root, which a Join builds on
	readied  bool        // ready closed with readyErr nil
	fail     *EndedError // why this end is leaving, when it is not the application
	ended    bool

	events   chan Event
	missed   atomic.Uint64
	ready    chan struct{} // closed once a Join has its replica or a Share is live, or on end
	readyErr error         // nil when ready means ready; written before ready closes
	done     chan struct{} // closed when the topic ended
	err      error         // why it ended; written before done closes
}

func newDoc(p *Peer, name string, doc *document.Document) *Doc {
	return &Doc{
		p:      p,
		name:   name,
		doc:    doc,
		events: make(chan Event, p.opts.EventBuffer),
		ready:  make(chan struct{}),
		done:   make(chan struct{}),
	}
}

// Name is the name the document is shared under.
func (d *Doc) Name() string { return d.name }

// Topic is this end's topic number for the document on the link.
func (d *Doc) Topic() uint64 { return d.topic }

// Events delivers what happens to the document, in order, with room for
// Options.EventBuffer events. An event that finds the channel full is
// dropped and counted by Missed; the replica is updated all the same. The
// channel is closed after Ended.
func (d *Doc) Events() <-chan Event { return d.events }

// Missed counts the events dropped because Events was full.
func (d *Doc) Missed() uint64 { return d.missed.Load() }

// Done is closed when the document's topic has ended.
func (d *Doc) Done() <-chan struct{} { return d.done }

// Err is why the topic ended (an *EndedError, or ErrClosed after
// Peer.Close), nil while it is shared.
func (d *Doc) Err() error {
	select {
	case <-d.done:
		return d.err
	default:
		return nil
	}
}

// Root is the replica's root id and kind.
func (d *Doc) Root() (commit.ID, commit.Kind) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.doc.Root()
}

// Snapshot is the replica's state as one commit of adds (no deltas when it
// is empty), as a state frame would carry it.
func (d *Doc) Snapshot() commit.Commit {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.doc.Snapshot()
}

// Read calls fn with the replica, which no commit changes while fn runs.
// The Applied and StateApplied events of every change fn sees are already
// in Events (or counted by Missed), and later changes' events come after,
// so len(d.Events()) taken inside fn counts the events the replica already
// covers (and Missed those it dropped): a state printed from fn and the
// events after those is gap-free and has no duplicate. fn must not keep the
// document or change it, and must not call the Doc's methods other than
// Events and Missed. After the topic ended the replica stays as it last was.
func (d *Doc) Read(fn func(*document.Document)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fn(d.doc)
}

// JSON is the replica as one JSON tree, for people and tests: an object is
// a JSON object and a map a JSON object keyed by the ids' text, keys sorted;
// an array is a JSON array in position order; an attached observable is
// written in place; any other value as commit.Value writes it (bytes as
// {"bytes": hex}, an alias as {"ref", "kind", "edge"}).
func (d *Doc) JSON() ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return jsonView(d.doc)
}

// Commit applies deltas to the replica as one commit and sends it with its
// undo, returning its sequence number on the link. A commit the replica
// refuses is not sent and the error is a *document.Refusal; one the link
// cannot send (too large, too many held before the topic is live) is rolled
// back and the error names that bound.
func (d *Doc) Commit(deltas ...commit.Delta) (uint64, error) {
	var seq uint64
	var err error
	if e := d.p.do(context.Background(), func() { seq, err = d.p.commit(d, deltas) }); e != nil {
		return 0, e
	}
	return seq, err
}

// Resync asks the other end for its state, which then moves the replica in
// place (StateApplied). Edits the other end does not have are lost.
func (d *Doc) Resync() error {
	var err error
	if e := d.p.do(context.Background(), func() { err = d.p.resync(d) }); e != nil {
		return e
	}
	return err
}

// Leave ends the topic at both ends and waits until it has ended here.
func (d *Doc) Leave() error {
	var err error
	if e := d.p.do(context.Background(), func() { err = d.p.leave(d) }); e != nil {
		return e
	}
	if err != nil {
		return err
	}
	<-d.done
	return nil
}
