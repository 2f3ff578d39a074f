package document

import (
	"slices"

	"github.com/weftgate/weftgate/protocol/commit"
)

// An observable keeps its slots in a slice, with a map from key to index
// and a cached canonical order of indices. A replace writes in place
// through the index it was validated with, and Snapshot and Reconcile read
// slots in order without a map lookup each. The map is built on the first
// lookup: most observables of a loaded document are only ever read in
// order, and a map each was a large part of what loading cost.

type slot struct {
	key string
	v   commit.Value
}

func newObservable(id commit.ID, kind commit.Kind, size int) *observable {
	return &observable{id: id, kind: kind,
		entries: make([]slot, 0, size), order: make([]int32, 0, size), orderOK: true}
}

// find is the index of key's slot. A nil index means not built yet.
func (o *observable) find(key string) (int32, bool) {
	if o.index == nil {
		if len(o.entries) == 0 {
			return 0, false
		}
		o.index = make(map[string]int32, len(o.entries))
		for i := range o.entries {
			o.index[o.entries[i].key] = int32(i)
		}
	}
	i, ok := o.index[key]
	return i, ok
}

func (o *observable) len() int { return len(o.entries) }

func (o *observable) get(key string) (commit.Value, bool) {
	if i, ok := o.find(key); ok {
		return o.entries[i].v, true
	}
	return commit.Value{}, false
}

// insert adds a slot that is not there. A key past the last in order keeps
// the order cache (appends are common: arrays grow at the end, and a
// commit's adds into a new observable arrive in canonical order).
func (o *observable) insert(key string, v commit.Value) {
	i := int32(len(o.entries))
	o.entries = append(o.entries, slot{key: key, v: v})
	if o.index != nil {
		o.index[key] = i
	}
	if o.orderOK && (len(o.order) == 0 || compareKey(o.entries[o.order[len(o.order)-1]].key, key) < 0) {
		o.order = append(o.order, i)
	} else {
		o.orderOK = false
	}
}

// remove deletes a slot that is there by moving the last one into its
// place, which invalidates indices: Apply removes after every other write.
func (o *observable) remove(key string) commit.Value {
	i, _ := o.find(key)
	old := o.entries[i].v
	delete(o.index, key)
	last := int32(len(o.entries) - 1)
	if i != last {
		o.entries[i] = o.entries[last]
		o.index[o.entries[i].key] = i
	}
	o.entries[last] = slot{}
	o.entries = o.entries[:last]
	o.orderOK = false
	return old
}

// sorted is the slot indices in canonical key order.
func (o *observable) sorted() []int32 {
	if o.orderOK {
		return o.order
	}
	ord := o.order[:0]
	if cap(ord) > 2*len(o.entries)+8 {
		ord = nil // let a shrunken observable give memory back
	}
	for i := range o.entries {
		ord = append(ord, int32(i))
	}
	slices.SortFunc(ord, func(a, b int32) int { return compareKey(o.entries[a].key, o.entries[b].key) })
	o.order, o.orderOK = ord, true
	return ord
}

func (o *observable) clearSlots() {
	o.index, o.entries, o.order, o.orderOK = nil, nil, nil, true
}

// clone copies the slots; the parent is the caller's to fix up.
func (o *observable) clone() *observable {
	c := &observable{id: o.id, kind: o.kind, entries: slices.Clone(o.entries),
		parentKey: o.parentKey, attaches: o.attaches}
	if o.orderOK {
		c.order, c.orderOK = slices.Clone(o.order), true
	}
	return c
}
