package document

import (
	"strings"

	"github.com/weftgate/weftgate/protocol/commit"
)

// Apply checks c against the document (format.md section 7, apply stage)
// and then applies all of it, or refuses it and changes nothing. The
// result does not depend on the order of c's deltas.
//
// It returns the inverse: the commit that, applied next, puts every slot c
// touched back as it was (prior values from the document, format.md 2.4),
// in canonical order and without a tag. Observables c brought in stay held
// after the inverse, detached.
//
// A refusal is a *Refusal; protocol.ReasonOf gives its first reason.
func (d *Document) Apply(c commit.Commit) (inverse commit.Commit, err error) {
	p := &d.plan
	defer p.done()
	p.build(d, c)
	if r := p.refusal(); r != nil {
		return commit.Commit{}, r
	}
	return commit.Commit{Deltas: p.apply(true)}, nil
}

// Update is Apply for a caller that has no use for the inverse (a replica
// taking the commits others made): the same checks and the same outcome,
// without building the inverse.
func (d *Document) Update(c commit.Commit) error { return d.apply(c) }

// apply applies c without computing an inverse (Reconcile needs none).
func (d *Document) apply(c commit.Commit) error {
	p := &d.plan
	defer p.done()
	p.build(d, c)
	if r := p.refusal(); r != nil {
		return r
	}
	p.apply(false)
	return nil
}

// apply changes the document as the built plan says; it cannot fail.
// Removes go last, because removing a slot moves another one's index.
func (p *plan) apply(inverse bool) []commit.Delta {
	d := p.d
	if d.empty() {
		return p.load(inverse, nil)
	}
	if len(p.newObs) > 0 {
		// Sized by their run of deltas, then those with none.
		for g, lo := range p.groups {
			if p.targets[lo] != nil {
				continue
			}
			id := p.deltas[lo].ID
			d.obs[id] = newObservable(id, p.newObs[id].kind, p.run(g)-int(lo))
		}
		for id, no := range p.newObs {
			if d.obs[id] == nil {
				d.obs[id] = newObservable(id, no.kind, 0)
			}
		}
	}
	var inv []commit.Delta
	if inverse {
		inv = make([]commit.Delta, len(p.deltas))
	}
	removes := 0
	var t *observable
	for i := range p.deltas {
		dl := &p.deltas[i]
		if i == 0 || dl.ID != p.deltas[i-1].ID {
			if t = p.targets[i]; t == nil {
				t = d.obs[dl.ID]
			}
		}
		var key string // the slot's own copy
		switch dl.Op {
		case commit.Remove:
			removes++
			continue
		case commit.Replace:
			e := &t.entries[p.priors[i].idx]
			if inverse {
				inv[i] = commit.Delta{Op: commit.Replace, ID: dl.ID, Ref: dl.Ref, Value: e.v}
			}
			d.detach(t, dl.Ref.Key, e.v)
			e.v = own(dl.Value)
			key = e.key
		default:
			if inverse {
				inv[i] = commit.Delta{Op: commit.Remove, ID: dl.ID, Ref: dl.Ref}
			}
			key = strings.Clone(dl.Ref.Key)
			t.insert(key, own(dl.Value))
			d.slots++
		}
		if isAttach(dl.Value) {
			t.attaches++
			c := d.obs[dl.Value.Ref.ID]
			c.parent, c.parentKey = t, key
		}
	}
	for i := 0; removes > 0; i++ {
		dl := &p.deltas[i]
		if dl.Op != commit.Remove {
			continue
		}
		removes--
		t := p.targets[i] // a remove's target is held: its slot was there
		old := t.remove(dl.Ref.Key)
		if inverse {
			inv[i] = commit.Delta{Op: commit.Add, ID: dl.ID, Ref: dl.Ref, Value: old}
		}
		d.detach(t, dl.Ref.Key, old)
		d.slots--
	}
	return inv
}

// run is the end of group g's deltas.
func (p *plan) run(g int) int {
	if g+1 < len(p.groups) {
		return int(p.groups[g+1])
	}
	return len(p.deltas)
}

// load is apply into a document holding only an empty root, as loading a
// snapshot does. Every delta of a valid commit there is an add, and each
// observable's run of them is in canonical key order already, so slots are
// laid out in bulk: one allocation each for the observables, their slots,
// their order and all keys and text, instead of several per observable and
// one per slot. What the shared blocks can keep alive after later edits is
// bounded by the commit loaded, once: a second load needs every other
// observable dropped (Compact) and the root emptied, and it replaces the
// root's slots too.
//
// It returns the inverse if asked; out, unless nil, gets a copy of the
// deltas in the same pass (Reconcile returns one).
func (p *plan) load(inverse bool, out []commit.Delta) []commit.Delta {
	d, root := p.d, p.d.root
	n := len(p.deltas)
	var inv []commit.Delta
	if inverse {
		inv = make([]commit.Delta, n)
	}
	obs := make([]observable, len(p.newObs))
	held := make(map[commit.ID]*observable, len(p.newObs)+1)
	held[root.id] = root
	k := 0
	for id, no := range p.newObs {
		o := &obs[k]
		k++
		o.id, o.kind, o.orderOK = id, no.kind, true
		held[id] = o
	}
	d.obs = held

	size := 0
	for i := range p.deltas {
		size += len(p.deltas[i].Ref.Key) + len(owned(&p.deltas[i].Value))
	}
	var b strings.Builder
	b.Grow(size)
	for i := range p.deltas {
		b.WriteString(p.deltas[i].Ref.Key)
		b.WriteString(owned(&p.deltas[i].Value))
	}
	text, at := b.String(), 0
	take := func(s string) string {
		if s == "" {
			return "" // not a pointer into text
		}
		at += len(s)
		return text[at-len(s) : at]
	}

	slots, order := make([]slot, n), make([]int32, n)
	for g, lo := range p.groups {
		hi := p.run(g)
		o := held[p.deltas[lo].ID]
		es, ord := slots[lo:hi:hi], order[lo:hi:hi]
		for j := range es {
			i := int(lo) + j
			dl := &p.deltas[i]
			if out != nil {
				out[i] = *dl
			}
			if inv != nil {
				inv[i] = commit.Delta{Op: commit.Remove, ID: dl.ID, Ref: dl.Ref}
			}
			v := dl.Value
			es[j].key = take(dl.Ref.Key)
			if s := owned(&v); s != "" {
				v.Str = take(s)
			}
			es[j].v = v
			ord[j] = int32(j)
			if isAttach(v) {
				o.attaches++
				c := held[v.Ref.ID]
				c.parent, c.parentKey = o, es[j].key
			}
		}
		// The root may keep an empty key map from before: drop it too.
		o.index, o.entries, o.order, o.orderOK = nil, es, ord, true
	}
	d.slots = n
	return inv
}

// owned is the text or bytes a value holds, which a slot keeps its own copy of.
func owned(v *commit.Value) string {
	if v.Type == commit.Text || v.Type == commit.Bytes {
		return v.Str
	}
	return ""
}

// detach undoes the attach edge a slot's old value held, if this slot is
// still the child's home. With attach done unconditionally, a move comes
// out right whichever of its two deltas runs first.
func (d *Document) detach(t *observable, key string, old commit.Value) {
	if !isAttach(old) {
		return
	}
	t.attaches--
	if c := d.obs[old.Ref.ID]; c.parent == t && c.parentKey == key {
		c.parent, c.parentKey = nil, ""
	}
}

// own copies the text or bytes a value holds. A decoded commit's short
// strings share one buffer per commit, and a slot kept for long would pin
// all of it: memory would then follow the commits seen, not the slots
// Limits count.
func own(v commit.Value) commit.Value {
	if s := owned(&v); s != "" {
		v.Str = strings.Clone(s)
	}
	return v
}

func isAttach(v commit.Value) bool {
	return v.Type == commit.RefValue && v.Ref.Edge == commit.Attach
}
