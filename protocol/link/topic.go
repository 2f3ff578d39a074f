package link

import "github.com/weftgate/weftgate/protocol/frame"

// want is our own outstanding request for the peer's state.
type want uint8

const (
	wantNone   want = iota
	wantShare       // Share asked: we hold nothing
	wantResync      // Resync asked: we hold a document but will take the peer's
)

// answer is where the peer's request for our state stands.
type answer uint8

const (
	answerNone  answer = iota
	answerHeld         // wanted, but held until our own want is answered
	answerAsked        // StateWanted emitted, SendState not yet called
)

// topic is one name on the link, from the first open either end sent until
// it ends. ours is 0 until we share; peer is 0 until the peer opens.
type topic struct {
	name string
	ours uint64
	peer uint64
	// root is ours from Share; once live, the document's root (the peer's
	// when we shared none).
	root      *frame.Root
	peerRoot  *frame.Root // from the peer's first open
	peerHolds bool        // the peer's first open said want false
	peerWant  bool        // the peer wanted state before we shared
	live      bool
	want      want
	answer    answer
	seq       uint64    // the last sequence number we gave out
	queue     []pending // commits sent before live or while our state is owed
	window    window
}

type pending struct {
	seq          uint64
	commit, undo []byte
}

// window keeps the last size commits sent on a topic. Sent sequence numbers
// are contiguous from first (commits a state covered come before any that
// are sent), so each has one slot in the ring.
type window struct {
	size  int
	first uint64
	ring  []pending
}

func (w *window) put(seq uint64, commit, undo []byte) {
	if len(w.ring) == 0 {
		w.first = seq
	}
	e := pending{seq, commit, undo}
	if i := int((seq - w.first) % uint64(w.size)); i < len(w.ring) {
		w.ring[i] = e
	} else {
		w.ring = append(w.ring, e)
	}
}

func (w *window) get(seq uint64) (commit, undo []byte) {
	if len(w.ring) == 0 || seq < w.first {
		return nil, nil
	}
	if i := (seq - w.first) % uint64(w.size); i < uint64(len(w.ring)) && w.ring[i].seq == seq {
		return w.ring[i].commit, w.ring[i].undo
	}
	return nil, nil
}
