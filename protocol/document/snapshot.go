package document

import (
	"bytes"
	"slices"

	"github.com/weftgate/weftgate/protocol/commit"
)

// walk returns every observable the root reaches, root first, by following
// attach edges down. Attach edges form a tree below the root, so each is
// met once.
func (d *Document) walk() []*observable {
	out := []*observable{d.root}
	for i := 0; i < len(out); i++ {
		o := out[i]
		if o.attaches == 0 {
			continue
		}
		for i := range o.entries {
			if v := &o.entries[i].v; isAttach(*v) {
				out = append(out, d.obs[v.Ref.ID])
			}
		}
	}
	return out
}

// Snapshot is the document's state as one commit of add deltas, one for
// every slot of every observable the root reaches, in canonical order and
// without a tag. It does not create the root: the receiver holds a root of
// the same id and kind. An empty document gives a commit with no deltas,
// which is not a commit on the wire (a state frame says null instead).
func (d *Document) Snapshot() commit.Commit {
	live := d.walk()
	slices.SortFunc(live, func(a, b *observable) int { return bytes.Compare(a.id[:], b.id[:]) })
	n := 0
	for _, o := range live {
		n += o.len()
	}
	if n == 0 {
		return commit.Commit{}
	}
	out := make([]commit.Delta, 0, n)
	for _, o := range live {
		for _, i := range o.sorted() {
			e := &o.entries[i]
			out = append(out, commit.Delta{Op: commit.Add, ID: o.id, Ref: commit.Ref{Kind: o.kind, Key: e.key}, Value: e.v})
		}
	}
	return commit.Commit{Deltas: out}
}

// SnapshotBytes is Snapshot encoded, ready for a state frame: nil when the
// document is empty, which the frame writes as null.
func (d *Document) SnapshotBytes() ([]byte, error) {
	s := d.Snapshot()
	if len(s.Deltas) == 0 {
		return nil, nil
	}
	return commit.Encode(s)
}

// Empty says whether the root reaches no slot at all.
func (d *Document) Empty() bool { return d.root.len() == 0 }
