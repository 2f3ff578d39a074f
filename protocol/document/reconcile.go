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
// that reached it; its own slots are left alone, except that an
// observable the state attaches elsewhere is released from it by a remove
// there (a move).
//
// The state is first checked exactly as Apply would check it against a
// scratch document holding only an empty root of this document's id and
// kind, so a state that is not a valid commit there is refused with
// Apply's reasons and nothing changes. A state with no deltas means an
// empty document: the root is emptied. The diff is then applied as a
// commit, and can be refused too (a kind the state gives an id this
// document holds detached as another kind, or a limit).
//
// It returns the commit it applied, in canonical order and without a tag,
// for delivery to every other consumer; no deltas means nothing changed.
//
// One case has no delta: an observable the state attaches whose attach
// edge here lies inside a detached observable, which no commit may write.
// Reconcile cuts that stale edge without a delta (nothing reachable sees
// it) and puts it back if the commit is refused.
func (d *Document) Reconcile(state commit.Commit) (commit.Commit, error) {
	if d.empty() {
		return d.fill(state)
	}
	// The scratch is only ever checked against, never filled: a valid state
	// is all adds in canonical order, so its deltas already are each
	// observable's slots in order, and the diff reads them from there.
	s := New(d.root.id, d.root.kind, d.limits)
	sp := &s.plan
	if len(state.Deltas) > 0 {
		sp.build(s, state)
		if r := sp.refusal(); r != nil {
			sp.done()
			return commit.Commit{}, r
		}
	} else {
		sp.reset(s)
	}
	diff := d.diff(sp)
	var cut []severed
	if stale := d.stale(sp, diff); len(stale) > 0 {
		diff, cut = d.unhook(diff, stale)
	}
	sp.done()
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

// fill is Reconcile into a document holding only an empty root (loading
// one): the diff is the state itself, so it is checked and loaded once.
func (d *Document) fill(state commit.Commit) (commit.Commit, error) {
	if len(state.Deltas) == 0 {
		return commit.Commit{}, nil
	}
	p := &d.plan
	defer p.done()
	p.build(d, state)
	if r := p.refusal(); r != nil {
		return commit.Commit{}, r
	}
	out := make([]commit.Delta, len(p.deltas)) // canonical, and not the caller's slice
	p.load(false, out)
	return commit.Commit{Deltas: out}, nil
}

// live is whether the checked state reaches id: the root, or an id it
// attaches (every attach in a valid state hangs under the root).
func live(sp *plan, id commit.ID) bool {
	if id == sp.d.root.id {
		return true
	}
	_, ok := sp.attached[id]
	return ok
}

// diff is the deltas that turn what the document holds for each
// observable the state reaches into what the state says, in canonical
// order: observables by id, and within one a merge of two key lists that
// are both in canonical order already.
func (d *Document) diff(sp *plan) []commit.Delta {
	ids := make([]commit.ID, 0, len(sp.attached)+1)
	ids = append(ids, sp.d.root.id)
	for id := range sp.attached {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b commit.ID) int { return bytes.Compare(a[:], b[:]) })
	var out []commit.Delta
	g := 0 // the state's runs of deltas by id, in the same order as ids
	for _, x := range ids {
		var want []commit.Delta
		if g < len(sp.groups) && sp.deltas[sp.groups[g]].ID == x {
			want = sp.deltas[sp.groups[g]:sp.run(g)]
			g++
		}
		kind := sp.d.root.kind
		if x != sp.d.root.id {
			kind = sp.newObs[x].kind
		}
		var have []int32
		o := d.obs[x]
		if o != nil && o.kind == kind {
			have = o.sorted()
		}
		out = mergeSlots(out, x, kind, want, have, o)
	}
	return out
}

// mergeSlots appends the deltas from o's slots (have, in order) to the
// state's (want, adds in order).
func mergeSlots(out []commit.Delta, x commit.ID, kind commit.Kind, want []commit.Delta, have []int32, o *observable) []commit.Delta {
	if n := len(want) + len(have); cap(out)-len(out) < n {
		// Double rather than let append grow a big diff by a quarter at a
		// time, which copies it several times over.
		out = slices.Grow(out, max(n, cap(out)))
	}
	i, j := 0, 0
	for i < len(want) || j < len(have) {
		c := 0
		switch {
		case i == len(want):
			c = 1
		case j == len(have):
			c = -1
		default:
			c = compareKey(want[i].Ref.Key, o.entries[have[j]].key)
		}
		switch {
		case c < 0:
			out = append(out, want[i])
			i++
		case c > 0:
			out = append(out, commit.Delta{Op: commit.Remove, ID: x, Ref: commit.Ref{Kind: kind, Key: o.entries[have[j]].key}})
			j++
		default:
			if v := &want[i].Value; !sameValue(v, &o.entries[have[j]].v) {
				out = append(out, commit.Delta{Op: commit.Replace, ID: x, Ref: want[i].Ref, Value: *v})
			}
			i++
			j++
		}
	}
	return out
}

// sameValue is a == b, looking only at the field the type uses.
func sameValue(a, b *commit.Value) bool {
	if a.Type != b.Type {
		return false
	}
	switch a.Type {
	case commit.Null:
		return true
	case commit.Bool:
		return a.Bool == b.Bool
	case commit.Int:
		return a.Int == b.Int
	case commit.Float:
		return a.Float == b.Float
	case commit.Text, commit.Bytes:
		return a.Str == b.Str
	}
	return *a == *b
}

// stale is the observables diff attaches whose attach edge here is in an
// observable the state does not reach, so diff does not release it.
func (d *Document) stale(sp *plan, diff []commit.Delta) []*observable {
	var out []*observable
	for i := range diff {
		v := diff[i].Value
		if diff[i].Op == commit.Remove || !isAttach(v) {
			continue
		}
		c := d.obs[v.Ref.ID]
		if c == nil || c.parent == nil || live(sp, c.parent.id) {
			continue // live(parent): diff rewrites every slot of it
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
		v, _ := holder.get(key)
		cut = append(cut, severed{child: c, holder: holder, key: key, value: v})
	}
	p.done()
	for _, s := range cut {
		s.holder.remove(s.key)
		s.holder.attaches--
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
		s.holder.insert(s.key, s.value)
		s.holder.attaches++
		d.slots++
		s.child.parent, s.child.parentKey = s.holder, s.key
	}
}
