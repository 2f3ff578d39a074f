package commit

import (
	"bytes"
	"cmp"
	"strings"
)

// compareDeltas orders deltas as format.md 6.9 does, by the encoding of the
// id followed by the encoding of the ref, without encoding them: ids are all
// one width; a ref's kind is one byte; a key's head grows with its length, so
// a shorter key sorts first, and keys of one length compare byte by byte.
// Zero means the two address one slot.
func compareDeltas(a, b *Delta) int {
	if c := bytes.Compare(a.ID[:], b.ID[:]); c != 0 {
		return c
	}
	if a.Ref.Kind != b.Ref.Kind {
		return cmp.Compare(a.Ref.Kind, b.Ref.Kind)
	}
	if len(a.Ref.Key) != len(b.Ref.Key) {
		return cmp.Compare(len(a.Ref.Key), len(b.Ref.Key))
	}
	return strings.Compare(a.Ref.Key, b.Ref.Key)
}
