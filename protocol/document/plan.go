package document

import (
	"slices"
	"sort"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

// plan is one commit checked against the document before anything changes:
// the deltas in canonical order, what each one finds, and what the commit
// adds. Building it never changes the document; applying it cannot fail.
type plan struct {
	d      *Document
	deltas []commit.Delta // canonical order: the caller's slice when it already is
	buf    []commit.Delta // backing for a sorted copy

	targets []*observable // per delta; nil when the id is not held yet
	priors  []prior       // per delta: the slot's value before the commit

	newObs   map[commit.ID]newObs   // ids the document does not hold yet
	attached map[commit.ID]attached // attach edges the commit adds, by child
	memo     map[commit.ID]reach    // extended reachability, see reach

	stack  []step
	seen   []commit.ID
	groups []int32 // where each id's run of deltas starts

	bad          []violation
	adds, remove int
	kindOK       bool // the previous delta's ref kind agreed
}

// prior is where the slot a delta addresses is before the commit; its
// value is read from there (indices hold until Apply's removes run).
type prior struct {
	idx int32
	ok  bool
}

type newObs struct {
	kind commit.Kind
}

// attached is the attach edges a commit adds to one child: how many, and
// the delta of the first (its parent slot).
type attached struct {
	n     int
	first int
}

// reach memoizes extended reachability. via says which edge proved it:
// the observable's existing attach edge, or the one the commit adds.
type reach struct {
	state uint8
	via   uint8
}

const (
	unknown uint8 = iota
	busy
	yes
	no
)

const (
	viaParent uint8 = iota
	viaCommit
)

type step struct {
	id  commit.ID
	opt uint8 // next edge to try: viaParent, viaCommit, then none
}

// Precedence of refusal reasons, most important first. A malformed delta
// or a duplicate slot stops checking there; every other rule is checked
// for the whole commit and all findings are reported in this order, then
// in canonical delta order. Kinds come before reachability because a kind
// conflict is wrong whatever the document holds (INDEX.md 8.1, invalid/028);
// limits come last because a commit that breaks a rule is refused for the
// rule, not for its size.
const (
	rankMalformed uint8 = iota
	rankKind
	rankAttach
	rankUnreachable
	rankSlot
	rankLimit
)

type violation struct {
	rank   uint8
	at     int // delta index in canonical order, or -1
	reason protocol.Reason
	msg    string
}

// reset readies the reusable parts. Maps that grew big are dropped rather
// than cleared, so one huge commit does not tax every later one.
func (p *plan) reset(d *Document) {
	p.d = d
	p.deltas = nil
	p.bad = p.bad[:0]
	p.adds, p.remove = 0, 0
	p.newObs = reuse(p.newObs)
	p.attached = reuse(p.attached)
	p.memo = reuse(p.memo)
}

const maxReusedMap = 256

func reuse[K comparable, V any](m map[K]V) map[K]V {
	if m == nil || len(m) > maxReusedMap {
		return map[K]V{}
	}
	clear(m)
	return m
}

// done drops references into the caller's commit, and buffers a big
// commit grew.
func (p *plan) done() {
	p.deltas = nil
	clear(p.targets)
	clear(p.buf)
	const keep = 4 * maxReusedMap
	if cap(p.buf) > keep {
		p.buf = nil
	}
	if cap(p.targets) > keep {
		p.targets, p.priors, p.groups = nil, nil, nil
	}
}

func (p *plan) fail(rank uint8, at int, r protocol.Reason, msg string) {
	p.bad = append(p.bad, violation{rank: rank, at: at, reason: r, msg: msg})
}

// build checks c against d and records everything apply needs.
func (p *plan) build(d *Document, c commit.Commit) {
	p.reset(d)
	if len(c.Deltas) == 0 {
		p.fail(rankMalformed, -1, protocol.EmptyCommit, "a commit carries at least one delta")
		return
	}
	// One pass for what a decoder would have checked, and whether the
	// deltas are in canonical order already (a decoded commit is).
	ds := c.Deltas
	sorted := true
	for i := range ds {
		if !fine(&ds[i]) {
			r, msg := wellFormed(&ds[i])
			p.fail(rankMalformed, -1, r, msg)
		}
		if i > 0 && sorted && compareDelta(&ds[i-1], &ds[i]) >= 0 {
			sorted = false
		}
	}
	if len(p.bad) > 0 {
		return
	}
	p.canonical(ds, sorted)
	if len(p.bad) > 0 {
		return
	}
	n := len(p.deltas)
	p.targets = grow(p.targets, n)
	p.priors = grow(p.priors, n)
	p.groups = p.groups[:0]
	for i := range p.deltas {
		if i == 0 || p.deltas[i-1].ID != p.deltas[i].ID {
			p.groups = append(p.groups, int32(i))
		}
		p.check(i)
	}
	p.checkReach()
	if len(p.bad) == 0 {
		p.checkLimits()
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// canonical sets p.deltas to the deltas in canonical order, copying only
// when they are not already, and refuses two deltas on one slot.
func (p *plan) canonical(ds []commit.Delta, sorted bool) {
	if sorted {
		p.deltas = ds
		return
	}
	p.buf = append(p.buf[:0], ds...)
	slices.SortFunc(p.buf, func(a, b commit.Delta) int { return compareDelta(&a, &b) })
	p.deltas = p.buf
	for i := 1; i < len(p.buf); i++ {
		if compareDelta(&p.buf[i-1], &p.buf[i]) == 0 {
			p.fail(rankMalformed, -1, protocol.DuplicateSlot, "two deltas address one slot")
			return
		}
	}
}

// check looks at one delta: kinds, attach edges and the slot. Canonical
// order groups one id's deltas, so the target and its kind are judged once
// per group (and again only when a ref of another kind shows up).
func (p *plan) check(i int) {
	d := p.d
	dl := &p.deltas[i]
	var t *observable
	sameKind := true
	if i > 0 && p.deltas[i-1].ID == dl.ID {
		t = p.targets[i-1]
		if prev := &p.deltas[i-1]; prev.Ref.Kind != dl.Ref.Kind || !p.kindOK {
			sameKind = p.mention(dl.ID, t, dl.Ref.Kind, i)
		}
	} else {
		t = d.obs[dl.ID]
		sameKind = p.mention(dl.ID, t, dl.Ref.Kind, i)
	}
	p.kindOK = sameKind
	p.targets[i] = t

	var pr prior
	if t != nil && sameKind {
		pr.idx, pr.ok = t.find(dl.Ref.Key)
	}
	p.priors[i] = pr

	switch dl.Op {
	case commit.Add:
		p.adds++
		if pr.ok {
			p.fail(rankSlot, i, protocol.SlotExists, "add of a slot that is there")
		}
	case commit.Replace, commit.Remove:
		if dl.Op == commit.Remove {
			p.remove++
		}
		if !pr.ok && sameKind {
			p.fail(rankSlot, i, protocol.SlotMissing, dl.Op.String()+" of a slot that is not there")
		}
	}
	if dl.Op == commit.Remove || dl.Value.Type != commit.RefValue {
		return
	}
	r := dl.Value.Ref
	child := d.obs[r.ID]
	p.mention(r.ID, child, r.Kind, i)
	if r.Edge != commit.Attach || (pr.ok && t.entries[pr.idx].v == dl.Value) {
		return // an alias, or the attach edge the slot already holds
	}
	if r.ID == d.root.id {
		p.fail(rankAttach, i, protocol.MultipleAttach, "the root is attached by nothing")
		return
	}
	a, ok := p.attached[r.ID]
	if !ok {
		a.first = i
	}
	a.n++
	p.attached[r.ID] = a
	switch {
	case a.n == 2:
		p.fail(rankAttach, a.first, protocol.MultipleAttach, "two attach edges to "+r.ID.String())
		fallthrough
	case a.n > 2:
		p.fail(rankAttach, i, protocol.MultipleAttach, "two attach edges to "+r.ID.String())
	case child != nil && child.parent != nil && !p.releases(child):
		p.fail(rankAttach, i, protocol.MultipleAttach, r.ID.String()+" is attached already and the commit does not detach it")
	}
}

// mention records that delta i says id is of kind k, and reports whether
// that agrees with every mention so far (format.md 1.2).
func (p *plan) mention(id commit.ID, o *observable, k commit.Kind, i int) bool {
	var have commit.Kind
	if o != nil {
		have = o.kind
	} else if no, ok := p.newObs[id]; ok {
		have = no.kind
	} else {
		p.newObs[id] = newObs{kind: k}
		return true
	}
	if have != k {
		p.fail(rankKind, i, protocol.KindConflict, id.String()+" is "+article(have)+", and here "+article(k))
		return false
	}
	return true
}

func article(k commit.Kind) string {
	if k == commit.Object || k == commit.Array {
		return "an " + k.String()
	}
	return "a " + k.String()
}

// releases says whether the commit removes or overwrites the slot that
// attaches child now: only then may it attach child elsewhere (a move).
func (p *plan) releases(child *observable) bool {
	at, ok := p.find(child.parent.id, child.parent.kind, child.parentKey)
	if !ok {
		return false
	}
	dl := &p.deltas[at]
	if dl.Op == commit.Remove {
		return true
	}
	v := dl.Value
	return dl.Op == commit.Replace && !(v.Type == commit.RefValue && v.Ref.Edge == commit.Attach && v.Ref.ID == child.id)
}

// find is the index of the delta addressing one slot.
func (p *plan) find(id commit.ID, k commit.Kind, key string) (int, bool) {
	probe := commit.Delta{ID: id, Ref: commit.Ref{Kind: k, Key: key}}
	i := sort.Search(len(p.deltas), func(i int) bool { return compareDelta(&p.deltas[i], &probe) >= 0 })
	return i, i < len(p.deltas) && compareDelta(&p.deltas[i], &probe) == 0
}

// checkReach refuses deltas whose target no attach path reaches, counting
// the edges the commit adds and not subtracting those it removes
// (format.md 1.1).
func (p *plan) checkReach() {
	for g, lo := range p.groups {
		id := p.deltas[lo].ID
		if p.reach(id) {
			continue
		}
		for i, hi := int(lo), p.run(g); i < hi; i++ {
			p.fail(rankUnreachable, i, protocol.Unreachable, "no attach path reaches "+id.String())
		}
	}
}

func (p *plan) checkLimits() {
	l := p.d.limits
	if n := len(p.d.obs) + len(p.newObs); n > l.MaxObservables {
		p.fail(rankLimit, -1, protocol.TooManyObservables, "the document would hold more than its observables limit")
	}
	if n := p.d.slots + p.adds - p.remove; n > l.MaxSlots {
		p.fail(rankLimit, -1, protocol.TooManySlots, "the document would hold more than its slots limit")
	}
}

// refusal is the violations found, most important first, or nil.
func (p *plan) refusal() *Refusal {
	if len(p.bad) == 0 {
		return nil
	}
	slices.SortStableFunc(p.bad, func(a, b violation) int {
		if a.rank != b.rank {
			return int(a.rank) - int(b.rank)
		}
		return a.at - b.at
	})
	bad := p.bad
	if len(bad) > MaxReasons {
		bad = bad[:MaxReasons]
	}
	r := &Refusal{Reasons: make([]*protocol.Error, len(bad))}
	for i, v := range bad {
		e := &protocol.Error{Reason: v.reason, Message: v.msg, Offset: -1}
		if v.at >= 0 {
			e.Path = p.slotPath(v.at)
		}
		r.Reasons[i] = e
	}
	return r
}
