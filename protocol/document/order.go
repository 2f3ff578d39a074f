package document

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"

	"github.com/weftgate/weftgate/protocol/commit"
)

// Canonical order (format.md 6.9) compares the encoded id, then the encoded
// ref. Every id encodes as the same 13-byte head plus bytes, so ids compare
// as bytes. A ref encodes as [kind, key]: the kind first, then the key's
// head, whose shortest form grows with the length, then the key bytes. So
// keys compare by length first, then bytewise.

func compareKey(a, b string) int {
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b))
	}
	if len(a) > 16 {
		return strings.Compare(a, b)
	}
	for i := 0; i < len(a); i++ { // short keys, the usual, without a call
		if a[i] != b[i] {
			return cmp.Compare(a[i], b[i])
		}
	}
	return 0
}

// compareID is bytes.Compare of two ids without the call: as two
// big-endian words.
func compareID(a, b *commit.ID) int {
	if x, y := binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8]); x != y {
		return cmp.Compare(x, y)
	}
	return cmp.Compare(binary.BigEndian.Uint32(a[8:]), binary.BigEndian.Uint32(b[8:]))
}

func compareDelta(a, b *commit.Delta) int {
	if c := compareID(&a.ID, &b.ID); c != 0 {
		return c
	}
	if a.Ref.Kind != b.Ref.Kind {
		return cmp.Compare(a.Ref.Kind, b.Ref.Kind)
	}
	return compareKey(a.Ref.Key, b.Ref.Key)
}

// comparePosition is array order: bytes unsigned, a prefix first
// (format.md 6.6), which is what bytes comparison of strings does.
func comparePosition(a, b string) int { return strings.Compare(a, b) }

// Range calls fn for each slot of id in the observable's own order: array
// slots by position, object and map slots in canonical order. It stops
// when fn returns false. fn must not change the document.
func (d *Document) Range(id commit.ID, fn func(ref commit.Ref, v commit.Value) bool) {
	o := d.obs[id]
	if o == nil {
		return
	}
	ord := o.sorted()
	if o.kind == commit.Array {
		ord = slices.Clone(ord)
		slices.SortFunc(ord, func(a, b int32) int { return comparePosition(o.entries[a].key, o.entries[b].key) })
	}
	for _, i := range ord {
		e := o.entries[i]
		if !fn(commit.Ref{Kind: o.kind, Key: e.key}, e.v) {
			return
		}
	}
}
