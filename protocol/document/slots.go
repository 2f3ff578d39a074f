package document

import (
	"slices"

	"github.com/weftgate/weftgate/protocol/commit"
)

// An observable keeps its slots in a slice, with a map from key to index
// and a cached canonical order of indices. A replace writes in place
// through the index it was validated with, and Snapshot and Reconcile read
// slots in order without a map lookup each.

type slot struct {
	key string
	v   commit.Value
}

func newObservable(id commit.ID, kind commit.Kind, size int) *observable {
	return &observable{id: id, kind: kind, index: make(map[string]int32, size),
		entries: make([]slot, 0, size), order: make([]int32, 0, size), orderOK: true}
}

func (o *observable) len() int { return len(o.entries) }

// keyOf is the slot's own copy of key, which is there.
func (o *observable) keyOf(key string) string { return o.entries[o.index[key]].key }

func (o *observable) get(key string) (commit.Value, bool) {
	if i, ok := o.index[key]; ok {
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
	o.index[key] = i
	if o.orderOK && (len(o.order) == 0 || compareKey(o.entries[o.order[len(o.order)-1]].key, key) < 0) {
		o.order = append(o.order, i)
	} else {
		o.orderOK = false
	}
}

// remove deletes a slot that is there by moving the last one into its
// place, which invalidates indices: Apply removes after every other write.
func (o *observable) remove(key string) commit.Value {
	i := o.index[key]
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
	clear(o.index)
	o.entries, o.order, o.orderOK = nil, nil, true
}

// clone copies the slots; the parent is the caller's to fix up.
func (o *observable) clone() *observable {
	c := &observable{id: o.id, kind: o.kind, entries: slices.Clone(o.entries),
		index: make(map[string]int32, len(o.entries)), parentKey: o.parentKey, attaches: o.attaches}
	for k, i := range o.index {
		c.index[k] = i
	}
	if o.orderOK {
		c.order, c.orderOK = slices.Clone(o.order), true
	}
	return c
}
