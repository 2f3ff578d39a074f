package commit

import (
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/wire"
)

// Encode returns the canonical bytes of c (format.md section 6).
func Encode(c Commit) ([]byte, error) { return AppendEncode(nil, c) }

// AppendEncode appends the canonical bytes of c to dst. Deltas may come in
// any order; they are written sorted by encoded id, then encoded ref, and the
// caller's slice is not reordered. The tag, when not nil, is carried as is.
//
// It refuses, leaving dst as it was, what has no encoding: no deltas
// (empty-commit), a tag outside 4 to 32 bytes (invalid-tag), two deltas on one
// slot (duplicate-slot), a bad position (invalid-position), a map key that is
// not an id (invalid-id), NaN or an infinity (non-finite-float), an integer
// outside plus or minus 2^53 (integer-out-of-range), text or an object key
// that is not UTF-8 (invalid-utf8), and an unknown op, kind, edge or value
// type (unknown-delta-type, unknown-ref-kind, unknown-edge-kind,
// invalid-delta).
func AppendEncode(dst []byte, c Commit) ([]byte, error) {
	ds := c.Deltas
	if len(ds) == 0 {
		return dst, protocol.Errorf(protocol.EmptyCommit, "a commit carries at least one delta")
	}
	if c.Tag != nil && (len(c.Tag) < MinTagBytes || len(c.Tag) > MaxTagBytes) {
		return dst, protocol.Errorf(protocol.InvalidTag, fmt.Sprintf("a tag is %d to %d bytes, not %d", MinTagBytes, MaxTagBytes, len(c.Tag)))
	}
	order, err := canonicalOrder(ds)
	if err != nil {
		return dst, err
	}
	orig := dst
	dst = slices.Grow(dst, encodedSizeHint(c))
	n := 1
	if c.Tag != nil {
		n = 2
	}
	dst = wire.AppendArray(dst, n)
	dst = wire.AppendArray(dst, len(ds))
	for i := range ds {
		d := &ds[i]
		if order != nil {
			d = &ds[order[i]]
		}
		if dst, err = appendDelta(dst, d); err != nil {
			return orig, err
		}
	}
	if c.Tag != nil {
		dst = wire.AppendBytes(dst, c.Tag)
	}
	return dst, nil
}

// canonicalOrder returns nil when ds is already in canonical order (the
// common case: a decoded commit), else the indexes of ds in that order.
func canonicalOrder(ds []Delta) ([]int32, error) {
	sorted := true
	for i := 1; i < len(ds); i++ {
		c := compareDeltas(&ds[i-1], &ds[i])
		if c == 0 {
			return nil, duplicateSlot()
		}
		if c > 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return nil, nil
	}
	order := make([]int32, len(ds))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return compareDeltas(&ds[a], &ds[b]) })
	for i := 1; i < len(order); i++ {
		if compareDeltas(&ds[order[i-1]], &ds[order[i]]) == 0 {
			return nil, duplicateSlot()
		}
	}
	return order, nil
}

func duplicateSlot() error {
	return protocol.Errorf(protocol.DuplicateSlot, "two deltas in one commit address the same slot")
}

// encodedSizeHint is an upper bound on the encoding of most commits, so the
// buffer grows once.
func encodedSizeHint(c Commit) int {
	n := 2 + 9 + len(c.Tag) + 9
	for i := range c.Deltas {
		d := &c.Deltas[i]
		n += 1 + 1 + 13 + 2 + 9 + len(d.Ref.Key) + 9 + 14 + len(d.Value.Str)
	}
	return n
}

func appendDelta(b []byte, d *Delta) ([]byte, error) {
	if !d.Op.valid() {
		return b, protocol.Errorf(protocol.UnknownDeltaType, d.Op.String()+" is not a delta type")
	}
	if d.Op == Remove {
		b = wire.AppendArray(b, 3)
	} else {
		b = wire.AppendArray(b, 4)
	}
	b = wire.AppendUint(b, uint64(d.Op))
	b = wire.AppendBytes(b, d.ID[:])
	b, err := appendRef(b, d.Ref)
	if err != nil || d.Op == Remove {
		return b, err
	}
	return appendValue(b, &d.Value)
}

func appendRef(b []byte, r Ref) ([]byte, error) {
	b = wire.AppendArray(b, 2)
	b = wire.AppendUint(b, uint64(r.Kind))
	switch r.Kind {
	case Object:
		if !utf8.ValidString(r.Key) {
			return b, protocol.Errorf(protocol.InvalidUTF8, "an object key is not UTF-8")
		}
		return wire.AppendText(b, r.Key), nil
	case Array:
		if len(r.Key) == 0 || r.Key[len(r.Key)-1] == 0 {
			return b, protocol.Errorf(protocol.InvalidPosition, "a position is non-empty and does not end in a zero byte")
		}
		return wire.AppendByteString(b, r.Key), nil
	case Map:
		if len(r.Key) != len(ID{}) {
			return b, protocol.Errorf(protocol.InvalidID, fmt.Sprintf("a map key is a 12-byte id, not %d bytes", len(r.Key)))
		}
		return wire.AppendByteString(b, r.Key), nil
	}
	return b, protocol.Errorf(protocol.UnknownRefKind, r.Kind.String()+" is not an observable kind")
}

func appendValue(b []byte, v *Value) ([]byte, error) {
	switch v.Type {
	case Null:
		return wire.AppendNull(b), nil
	case Bool:
		return wire.AppendBool(b, v.Bool), nil
	case Int:
		if !wire.ValidInt(v.Int) {
			return b, protocol.Errorf(protocol.IntegerOutOfRange, "an integer outside 2^53 is not exact")
		}
		return wire.AppendInt(b, v.Int), nil
	case Float:
		if !wire.ValidFloat(v.Float) {
			return b, protocol.Errorf(protocol.NonFiniteFloat, "NaN and the infinities have no encoding")
		}
		return wire.AppendFloat(b, v.Float), nil
	case Text:
		if !utf8.ValidString(v.Str) {
			return b, protocol.Errorf(protocol.InvalidUTF8, "text is not UTF-8")
		}
		return wire.AppendText(b, v.Str), nil
	case Bytes:
		return wire.AppendByteString(b, v.Str), nil
	case RefValue:
		r := v.Ref
		if !r.Edge.valid() {
			return b, protocol.Errorf(protocol.UnknownEdgeKind, r.Edge.String()+" is not an edge kind")
		}
		if !r.Kind.valid() {
			return b, protocol.Errorf(protocol.UnknownRefKind, r.Kind.String()+" is not an observable kind")
		}
		b = wire.AppendArray(b, 3)
		b = wire.AppendUint(b, uint64(r.Edge))
		b = wire.AppendUint(b, uint64(r.Kind))
		return wire.AppendBytes(b, r.ID[:]), nil
	}
	return b, protocol.Errorf(protocol.InvalidDelta, fmt.Sprintf("value type %d has no encoding", v.Type))
}
