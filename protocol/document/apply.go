package document

import "github.com/weftgate/weftgate/protocol/commit"

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
// Observables the commit brings in get their key order for free: their
// deltas are all adds and arrive in canonical order.
func (p *plan) apply(inverse bool) []commit.Delta {
	d := p.d
	for id, no := range p.newObs {
		d.obs[id] = &observable{id: id, kind: no.kind, slots: make(map[string]commit.Value, no.slots),
			keys: make([]string, 0, no.slots), keysOK: true}
	}
	var inv []commit.Delta
	if inverse {
		inv = make([]commit.Delta, len(p.deltas))
	}
	var t *observable
	for i := range p.deltas {
		dl := &p.deltas[i]
		if i == 0 || dl.ID != p.deltas[i-1].ID {
			if t = p.targets[i]; t == nil {
				t = d.obs[dl.ID]
			}
		}
		pr := p.priors[i]
		key := dl.Ref.Key
		switch {
		case !inverse:
		case dl.Op == commit.Add:
			inv[i] = commit.Delta{Op: commit.Remove, ID: dl.ID, Ref: dl.Ref}
		case dl.Op == commit.Replace:
			inv[i] = commit.Delta{Op: commit.Replace, ID: dl.ID, Ref: dl.Ref, Value: pr.v}
		case dl.Op == commit.Remove:
			inv[i] = commit.Delta{Op: commit.Add, ID: dl.ID, Ref: dl.Ref, Value: pr.v}
		}
		// Detach only when this slot is still the child's home, and attach
		// unconditionally: then a move is right in either delta order.
		if pr.ok && isAttach(pr.v) {
			t.attaches--
			if c := d.obs[pr.v.Ref.ID]; c.parent == t && c.parentKey == key {
				c.parent, c.parentKey = nil, ""
			}
		}
		if dl.Op == commit.Remove {
			delete(t.slots, key)
			d.slots--
			t.keysOK = false
			continue
		}
		t.slots[key] = dl.Value
		if !pr.ok {
			d.slots++
			if t.keysOK && len(t.keys) == len(t.slots)-1 && (len(t.keys) == 0 || compareKey(t.keys[len(t.keys)-1], key) < 0) {
				t.keys = append(t.keys, key) // in order: keep the cache
			} else {
				t.keysOK = false
			}
		}
		if isAttach(dl.Value) {
			t.attaches++
			c := d.obs[dl.Value.Ref.ID]
			c.parent, c.parentKey = t, key
		}
	}
	return inv
}

func isAttach(v commit.Value) bool {
	return v.Type == commit.RefValue && v.Ref.Edge == commit.Attach
}
