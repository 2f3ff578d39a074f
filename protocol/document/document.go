package document

import "github.com/weftgate/weftgate/protocol/commit"

// Document is one aweft document: a root observable and every observable
// it holds, by id. It is not safe for concurrent use; one owner (a hub)
// drives it.
//
// Observables whose attach edge was removed stay held with their slots
// (format.md section 8 leaves their fate open): an id stays valid across a
// detach and a reattach (identity.md section 1), and the aweft client keeps
// them too. They are outside the document's state: Snapshot, the JSON view
// and Path see only what the root reaches. Compact drops them.
type Document struct {
	root   *observable
	obs    map[commit.ID]*observable
	slots  int
	limits Limits
	plan   plan // reused between commits, so a commit allocates little
}

// observable is one object, array or map.
type observable struct {
	id   commit.ID
	kind commit.Kind

	// Slots, keyed by Ref.Key (the kind is the observable's): see slots.go.
	index   map[string]int32
	entries []slot
	order   []int32
	orderOK bool

	// parent holds the one slot in the whole document whose value attaches
	// this observable, or nil: Path walks up these.
	parent    *observable
	parentKey string

	// attaches counts slots holding attach references, so a walk down the
	// tree skips leaves without looking at their slots.
	attaches int
}

// New returns a document holding only an empty root of the given id and
// kind. The zero Limits means the defaults.
func New(root commit.ID, kind commit.Kind, l Limits) *Document {
	r := newObservable(root, kind, 0)
	return &Document{
		root:   r,
		obs:    map[commit.ID]*observable{root: r},
		limits: l.withDefaults(),
	}
}

// empty is whether the document holds only an empty root: a commit into
// it is a load (plan.load).
func (d *Document) empty() bool { return len(d.obs) == 1 && d.root.len() == 0 }

// Root is the root's id and kind.
func (d *Document) Root() (commit.ID, commit.Kind) { return d.root.id, d.root.kind }

// Limits is the bounds in force, defaults filled in.
func (d *Document) Limits() Limits { return d.limits }

// Observables is how many observables the document holds, the root and
// detached ones included (what MaxObservables bounds).
func (d *Document) Observables() int { return len(d.obs) }

// Slots is how many slots the document holds over all its observables
// (what MaxSlots bounds).
func (d *Document) Slots() int { return d.slots }

// Kind is the kind of a held observable.
func (d *Document) Kind(id commit.ID) (commit.Kind, bool) {
	o := d.obs[id]
	if o == nil {
		return 0, false
	}
	return o.kind, true
}

// Get is the value of one slot. A ref of another kind than the observable's
// addresses nothing.
func (d *Document) Get(id commit.ID, ref commit.Ref) (commit.Value, bool) {
	o := d.obs[id]
	if o == nil || o.kind != ref.Kind {
		return commit.Value{}, false
	}
	return o.get(ref.Key)
}

// Len is how many slots one observable has (0 when it is not held).
func (d *Document) Len(id commit.ID) int {
	if o := d.obs[id]; o != nil {
		return o.len()
	}
	return 0
}

// Reachable says whether an attach path leads from the root to id.
func (d *Document) Reachable(id commit.ID) bool {
	o := d.obs[id]
	return o != nil && d.reachable(o)
}

// reachable walks up attach edges. A detached cycle (a move into one's own
// subtree) never reaches the root, so the walk is bounded by the number of
// observables.
func (d *Document) reachable(o *observable) bool {
	for n := len(d.obs); o != d.root; n-- {
		if o.parent == nil || n == 0 {
			return false
		}
		o = o.parent
	}
	return true
}

// Clone is a deep copy with the same limits.
func (d *Document) Clone() *Document {
	c := &Document{obs: make(map[commit.ID]*observable, len(d.obs)), slots: d.slots, limits: d.limits}
	for id, o := range d.obs {
		c.obs[id] = o.clone()
	}
	for id, o := range d.obs {
		if o.parent != nil {
			c.obs[id].parent = c.obs[o.parent.id]
		}
	}
	c.root = c.obs[d.root.id]
	return c
}

// Compact drops every observable the root does not reach. What remains is
// exactly what a document rebuilt from Snapshot would hold: an observable
// that only an alias names stays, emptied. A later attach of a dropped id
// starts an empty observable. It returns how many were dropped.
func (d *Document) Compact() int {
	live := d.walk()
	in := make(map[*observable]bool, len(live))
	for _, o := range live {
		in[o] = true
	}
	named := map[commit.ID]bool{}
	slots := 0
	for _, o := range live {
		slots += o.len()
		for _, e := range o.entries {
			if e.v.Type == commit.RefValue && e.v.Ref.Edge == commit.Alias {
				named[e.v.Ref.ID] = true
			}
		}
	}
	dropped := 0
	for id, o := range d.obs {
		switch {
		case in[o]:
		case named[id]:
			o.clearSlots()
			o.parent, o.parentKey, o.attaches = nil, "", 0
		default:
			delete(d.obs, id)
			dropped++
		}
	}
	d.slots = slots
	return dropped
}
