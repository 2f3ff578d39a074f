package document

import (
	"bytes"
	"slices"

	"github.com/weftgate/weftgate/protocol/commit"
)

// Reconcile moves the document, in place, to the state a peer's Snapshot
// describes, as one commit (the aweft client's reconcile, notes section 5):
// add for slots the state has and the document lacks, replace for slots
// whose value differs, remove for slots the state does not mention. An
// observable the state does not reach is detached by removing the slot
// that reached it; its own slots are left alone.
//
// The state is first applied to a scratch document with this document's
// root id and kind, so a state that is not a valid commit against an
// empty root is refused with Apply's reasons and nothing changes. A state
// with no deltas means an empty document: the root is emptied.
//
// It returns the commit it applied, in canonical order, for delivery to
// every other consumer; a commit with no deltas means nothing changed.
//
// One case has no delta: an observable the state attaches whose attach
// edge here lies inside a detached observable, which no commit may write.
// Reconcile cuts that stale edge without a delta (nothing reachable sees
// it) and puts it back if the commit is refused.
func (d *Document) Reconcile(state commit.Commit) (commit.Commit, error) {
	s := New(d.root.id, d.root.kind, d.limits)
	if len(state.Deltas) > 0 {
		if err := s.apply(state); err != nil {
			return commit.Commit{}, err
		}
	}
	diff := d.diff(s)
	var cut []severed
	if stale := d.stale(s, diff); len(stale) > 0 {
		diff, cut = d.unhook(diff, stale)
	}
	if len(diff) == 0 {
		return commit.Commit{}, nil
	}
	c := commit.Commit{Deltas: diff}
	if err := d.apply(c); err != nil {
		d.rehook(cut)
		return commit.Commit{}, err
	}
	return c, nil
}

// diff is the deltas that turn what the document holds for each
// observable the scratch reaches into what the scratch holds, in canonical
// order: observables by id, and within one a merge of the two key lists,
// both already in canonical order.
func (d *Document) diff(s *Document) []commit.Delta {
	live := s.walk()
	slices.SortFunc(live, func(a, b *observable) int { return bytes.Compare(a.id[:], b.id[:]) })
	var out []commit.Delta
	for _, x := range live {
		var have []string
		o := d.obs[x.id]
		if o != nil && o.kind == x.kind {
			have = o.sortedKeys()
		}
		want := x.sortedKeys()
		i, j := 0, 0
		for i < len(want) || j < len(have) {
			c := 0
			switch {
			case i == len(want):
				c = 1
			case j == len(have):
				c = -1
			default:
				c = compareKey(want[i], have[j])
			}
			switch {
			case c < 0:
				out = append(out, commit.Delta{Op: commit.Add, ID: x.id, Ref: commit.Ref{Kind: x.kind, Key: want[i]}, Value: x.slots[want[i]]})
				i++
			case c > 0:
				out = append(out, commit.Delta{Op: commit.Remove, ID: x.id, Ref: commit.Ref{Kind: x.kind, Key: have[j]}})
				j++
			default:
				if v := x.slots[want[i]]; v != o.slots[have[j]] {
					out = append(out, commit.Delta{Op: commit.Replace, ID: x.id, Ref: commit.Ref{Kind: x.kind, Key: want[i]}, Value: v})
				}
				i++
				j++
			}
		}
	}
	return out
}

// stale is the observables diff attaches whose attach edge here is in an
// observable the scratch does not reach, so diff does not release it.
func (d *Document) stale(s *Document, diff []commit.Delta) []*observable {
	var out []*observable
	for i := range diff {
		v := diff[i].Value
		if diff[i].Op == commit.Remove || !isAttach(v) {
			continue
		}
		c := d.obs[v.Ref.ID]
		if c == nil || c.parent == nil {
			continue
		}
		if p := s.obs[c.parent.id]; p != nil && s.reachable(p) {
			continue // diff rewrites every slot of p
		}
		out = append(out, c)
	}
	return out
}

type severed struct {
	child, holder *observable
	key           string
	value         commit.Value
}

// unhook releases stale edges: by a remove in diff when the edge's holder
// is reachable for the diff (it is being detached in the same commit), or
// else by cutting it here.
func (d *Document) unhook(diff []commit.Delta, stale []*observable) ([]commit.Delta, []severed) {
	p := &d.plan
	p.build(d, commit.Commit{Deltas: diff})
	var removes []commit.Delta
	var cut []severed
	for _, c := range stale {
		holder, key := c.parent, c.parentKey
		if p.reach(holder.id) {
			removes = append(removes, commit.Delta{Op: commit.Remove, ID: holder.id, Ref: commit.Ref{Kind: holder.kind, Key: key}})
			continue
		}
		cut = append(cut, severed{child: c, holder: holder, key: key, value: holder.slots[key]})
	}
	p.done()
	for _, s := range cut {
		delete(s.holder.slots, s.key)
		s.holder.attaches--
		s.holder.keysOK = false
		d.slots--
		s.child.parent, s.child.parentKey = nil, ""
	}
	if len(removes) > 0 {
		diff = append(diff, removes...)
		slices.SortFunc(diff, func(a, b commit.Delta) int { return compareDelta(&a, &b) })
	}
	return diff, cut
}

// rehook puts cut edges back after a refusal.
func (d *Document) rehook(cut []severed) {
	for _, s := range cut {
		s.holder.slots[s.key] = s.value
		s.holder.attaches++
		s.holder.keysOK = false
		d.slots++
		s.child.parent, s.child.parentKey = s.holder, s.key
	}
}
