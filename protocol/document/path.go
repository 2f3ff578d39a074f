package document

import (
	"encoding/hex"
	"slices"

	"github.com/weftgate/weftgate/protocol/commit"
)

// A path is the text steps from the root to a slot along attach edges, one
// step per slot: an object key as itself, an array position as lowercase
// hex of its bytes, a map key as the id's text form. The root's path is
// empty (not nil); nil means no attach path reaches the target.

// Step is the path step text of one ref.
func Step(ref commit.Ref) string {
	switch ref.Kind {
	case commit.Array:
		return hex.EncodeToString([]byte(ref.Key))
	case commit.Map:
		if len(ref.Key) == len(commit.ID{}) {
			return commit.ID([]byte(ref.Key)).String()
		}
		return hex.EncodeToString([]byte(ref.Key))
	}
	return ref.Key
}

// Path is the attach path from the root to the observable id, or false
// when none reaches it.
func (d *Document) Path(id commit.ID) ([]string, bool) {
	o := d.obs[id]
	if o == nil || !d.reachable(o) {
		return nil, false
	}
	var steps []string
	for ; o != d.root; o = o.parent {
		steps = append(steps, Step(commit.Ref{Kind: o.parent.kind, Key: o.parentKey}))
	}
	slices.Reverse(steps)
	if steps == nil {
		steps = []string{}
	}
	return steps, true
}

// Paths is the path of each delta's slot (its observable's path plus the
// ref's step), in the commit's own delta order, judged as Apply judges
// reachability: the document as it is plus the attach edges c adds. A
// target reached both ways takes its existing place; a nil entry is a
// target nothing reaches. Paths works on any commit, valid or not.
func (d *Document) Paths(c commit.Commit) [][]string {
	p := &d.plan
	defer p.done()
	p.build(d, c)
	out := make([][]string, len(c.Deltas))
	if p.deltas == nil {
		return out // malformed: no delta has a place
	}
	bases := map[commit.ID][]string{} // nil: unreachable
	for i := range c.Deltas {
		dl := &c.Deltas[i]
		base, seen := bases[dl.ID]
		if !seen {
			base, _ = p.pathTo(dl.ID)
			bases[dl.ID] = base
		}
		if base != nil {
			out[i] = append(slices.Clip(base), Step(dl.Ref)) // a copy each
		}
	}
	return out
}

// slotPath is the path of the slot delta i (canonical order) addresses.
func (p *plan) slotPath(i int) []string {
	dl := &p.deltas[i]
	base, ok := p.pathTo(dl.ID)
	if !ok {
		return nil
	}
	return append(base, Step(dl.Ref))
}

// pathTo follows the edges that proved id reachable.
func (p *plan) pathTo(id commit.ID) ([]string, bool) {
	if !p.reach(id) {
		return nil, false
	}
	steps := []string{}
	for id != p.d.root.id {
		var parent commit.ID
		var ref commit.Ref
		if p.memo[id].via == viaCommit {
			dl := &p.deltas[p.attached[id].first]
			parent, ref = dl.ID, dl.Ref
		} else {
			o := p.d.obs[id]
			parent, ref = o.parent.id, commit.Ref{Kind: o.parent.kind, Key: o.parentKey}
		}
		steps = append(steps, Step(ref))
		id = parent
	}
	slices.Reverse(steps)
	return steps, true
}

// parentVia is the observable one edge up from id: its existing attach
// edge (viaParent) or the one the commit adds (viaCommit).
func (p *plan) parentVia(id commit.ID, via uint8) (commit.ID, bool) {
	if via == viaParent {
		if o := p.d.obs[id]; o != nil && o.parent != nil {
			return o.parent.id, true
		}
		return commit.ID{}, false
	}
	if a, ok := p.attached[id]; ok {
		return p.deltas[a.first].ID, true
	}
	return commit.ID{}, false
}

// reach says whether an attach path leads from the root to id, over the
// document's edges plus those the commit adds. Each observable has at most
// two edges up, so this is a depth-first walk up with a memo. When it
// succeeds, every observable on the walked chain is proved and remembers
// which edge proved it (so pathTo cannot loop); when it fails, everything
// it visited is unreachable. Anything else it visited stays unknown.
func (p *plan) reach(x commit.ID) bool {
	if len(p.attached) == 0 {
		// The commit adds no attach edge: only the document's count, and
		// pathTo's walk finds no memo, which means the existing edge.
		o := p.d.obs[x]
		return o != nil && p.d.reachable(o)
	}
	root := p.d.root.id
	if x == root {
		return true
	}
	switch p.memo[x].state {
	case yes:
		return true
	case no:
		return false
	}
	p.stack = append(p.stack[:0], step{id: x})
	p.seen = append(p.seen[:0], x)
	p.memo[x] = reach{state: busy}
	found := false
walk:
	for len(p.stack) > 0 {
		top := &p.stack[len(p.stack)-1]
		if top.opt > viaCommit {
			p.stack = p.stack[:len(p.stack)-1]
			continue
		}
		up, ok := p.parentVia(top.id, top.opt)
		top.opt++
		if !ok {
			continue
		}
		if up == root {
			found = true
			break
		}
		switch p.memo[up].state {
		case yes:
			found = true
			break walk
		case busy, no:
			continue
		}
		p.memo[up] = reach{state: busy}
		p.seen = append(p.seen, up)
		p.stack = append(p.stack, step{id: up})
	}
	if !found {
		for _, id := range p.seen {
			p.memo[id] = reach{state: no}
		}
		return false
	}
	for _, s := range p.stack {
		p.memo[s.id] = reach{state: yes, via: s.opt - 1}
	}
	for _, id := range p.seen {
		if p.memo[id].state == busy {
			delete(p.memo, id)
		}
	}
	return true
}
