package docsm

import (
	"fmt"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// Replica is the document a hub holds, bounded in the size of its encoded
// state: a state a joiner cannot receive in one message would leave it with
// an open and then silence (issue 19). Measuring the state costs an encode
// of the whole document, so the size is bounded from above instead (a
// commit grows a state by at most its own bytes) and measured only when
// that bound passes the limit.
type Replica struct {
	*document.Document
	size int // the bound: exact when measured, plus every commit since
	max  int
}

// NewReplica holds d, whose encoded state is size bytes, under max.
func NewReplica(d *document.Document, size, max int) *Replica {
	return &Replica{Document: d, size: size, max: max}
}

// Land applies c (n encoded bytes) unless the state would pass the bound:
// then the document is unchanged and the error is document-too-large.
// With undo it returns c's inverse, which Undo takes back.
func (r *Replica) Land(c commit.Commit, n int, undo bool) (commit.Commit, error) {
	var inv commit.Commit
	if r.size+n <= r.max && !undo {
		if err := r.Document.Update(c); err != nil {
			return inv, err
		}
		r.size += n
		return inv, nil
	}
	inv, err := r.Document.Apply(c)
	if err != nil {
		return inv, err
	}
	if r.size+n <= r.max {
		r.size += n
		return inv, nil
	}
	size := len(r.State())
	if size > r.max {
		r.Undo(inv, 0)
		return commit.Commit{}, protocol.Errorf(protocol.DocumentTooLarge, fmt.Sprintf("the commit would make the document %d bytes, over the %d-byte bound", size, r.max))
	}
	r.size = size
	return inv, nil
}

// Follow applies c (n bytes) that another node already applied and
// stored: it is not bounded again here.
func (r *Replica) Follow(c commit.Commit, n int) error {
	if err := r.Document.Update(c); err != nil {
		return err
	}
	r.size += n
	return nil
}

// Undo applies inv, the inverse Land returned for a commit of n bytes. It
// always applies to the document it came from.
func (r *Replica) Undo(inv commit.Commit, n int) {
	if err := r.Document.Update(inv); err != nil {
		panic(fmt.Sprintf("docsm: the inverse of a commit does not apply: %v", err))
	}
	r.size -= n
}

// State is the document's state as one commit, nil when it is empty.
func (r *Replica) State() []byte {
	s := r.Document.Snapshot()
	if len(s.Deltas) == 0 {
		return nil
	}
	b, err := commit.Encode(s)
	if err != nil {
		// A document that applied only valid commits always encodes.
		panic(fmt.Sprintf("docsm: a document's state does not encode: %v", err))
	}
	return b
}

// Size is the bound on the encoded state.
func (r *Replica) Size() int { return r.size }
