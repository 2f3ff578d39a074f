package commit

// The decoder as it was before the single walk (wire.Scan over the whole
// input, then a second walk with wire.Reader), kept as the oracle that the
// single walk must agree with: same commit, same reason, same offset.

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/wire"
)

// shortString is the longest string that went into the reference's arena.
const shortString = 64

func decodeReference(b []byte, l Limits) (Commit, error) {
	if len(b) > l.maxCommitBytes() {
		return Commit{}, &protocol.Error{Reason: protocol.CommitTooLarge,
			Message: fmt.Sprintf("a commit of %d bytes is over the limit of %d", len(b), l.maxCommitBytes()), Offset: 0}
	}
	if err := wire.Scan(b); err != nil {
		return Commit{}, err
	}
	r := wire.NewReader(b)
	parts, ok := r.Array()
	if !ok || parts < 1 || parts > 2 {
		return Commit{}, at(protocol.InvalidCommit, 0, "a commit is an array of its deltas and an optional tag")
	}
	listAt := r.Offset()
	n, ok := r.Array()
	if !ok {
		return Commit{}, at(protocol.InvalidCommit, listAt, "the deltas are an array")
	}
	if n == 0 {
		return Commit{}, at(protocol.EmptyCommit, listAt, "a commit carries at least one delta")
	}
	if n > l.maxDeltas() {
		return Commit{}, at(protocol.TooManyDeltas, listAt, fmt.Sprintf("%d deltas are over the limit of %d", n, l.maxDeltas()))
	}
	d := refDecoder{r: r, b: b}
	// Every delta spends at least 18 bytes on heads and its id, so this
	// bounds the short strings; a wrong guess costs a copy, not correctness.
	d.arena.Grow(max(0, len(b)-18*n))
	deltas := make([]Delta, n)
	var order error
	prev := []byte(nil)
	for i := range deltas {
		slot, err := d.delta(&deltas[i])
		if err != nil {
			return Commit{}, err
		}
		// The order is judged once every delta has been read, as the
		// reference decoder does, so a later malformed delta wins.
		if order == nil && prev != nil {
			switch c := bytes.Compare(prev, slot); {
			case c == 0:
				order = at(protocol.DuplicateSlot, d.start, "two deltas in one commit address the same slot")
			case c > 0:
				order = at(protocol.DeltasOutOfOrder, d.start, "deltas are written in ascending order of id, then ref")
			}
		}
		prev = slot
	}
	if order != nil {
		return Commit{}, order
	}
	c := Commit{Deltas: deltas}
	if parts == 2 {
		tagAt := d.r.Offset()
		tag, ok := d.r.Bytes()
		if !ok || len(tag) < MinTagBytes || len(tag) > MaxTagBytes {
			return Commit{}, at(protocol.InvalidTag, tagAt, fmt.Sprintf("a tag is a byte string of %d to %d bytes", MinTagBytes, MaxTagBytes))
		}
		c.Tag = bytes.Clone(tag)
	}
	return c, nil
}

type refDecoder struct {
	r     wire.Reader
	b     []byte
	arena strings.Builder
	start int // offset of the delta being read
}

// str returns p (a slice of d.b) as a string, from the arena when short.
func (d *refDecoder) str(p []byte) string {
	if len(p) > shortString {
		return string(p)
	}
	at := d.arena.Len()
	d.arena.Write(p)
	return d.arena.String()[at:]
}

// delta reads one delta into out and returns the bytes of its id and ref,
// which is what canonical order compares.
func (d *refDecoder) delta(out *Delta) ([]byte, error) {
	r := &d.r
	d.start = r.Offset()
	n, ok := r.Array()
	if !ok || n < 3 || n > 4 {
		return nil, at(protocol.InvalidDelta, d.start, "a delta is an array of a type, an id, a ref and a value unless it removes")
	}
	opAt := r.Offset()
	op, ok := r.Uint()
	if !ok || op > uint64(Remove) {
		return nil, at(protocol.UnknownDeltaType, opAt, "a delta type is 0 add, 1 replace or 2 remove")
	}
	out.Op = Op(op)
	idAt := r.Offset()
	if err := d.id(&out.ID); err != nil {
		return nil, err
	}
	if err := d.ref(&out.Ref); err != nil {
		return nil, err
	}
	slot := d.b[idAt:r.Offset()]
	switch {
	case out.Op == Remove && n != 3:
		return nil, at(protocol.UnexpectedValue, r.Offset(), "a remove carries no value")
	case out.Op != Remove && n != 4:
		return nil, at(protocol.MissingValue, d.start, "an "+out.Op.String()+" carries a value")
	case out.Op != Remove:
		if err := d.value(&out.Value); err != nil {
			return nil, err
		}
	}
	return slot, nil
}

func (d *refDecoder) id(out *ID) error {
	at0 := d.r.Offset()
	p, ok := d.r.Bytes()
	if !ok || len(p) != len(ID{}) {
		return at(protocol.InvalidID, at0, "an id is a 12-byte string")
	}
	copy(out[:], p)
	return nil
}

func (d *refDecoder) ref(out *Ref) error {
	r := &d.r
	refAt := r.Offset()
	n, ok := r.Array()
	if !ok || n != 2 {
		return at(protocol.InvalidRef, refAt, "a ref is an array of a kind and a key")
	}
	kindAt := r.Offset()
	k, ok := r.Uint()
	if !ok || k > uint64(Map) {
		return at(protocol.UnknownRefKind, kindAt, "a ref kind is 0 object, 1 array or 2 map")
	}
	out.Kind = Kind(k)
	keyAt := r.Offset()
	var key []byte
	if out.Kind == Object {
		key, ok = r.TextBytes()
	} else {
		key, ok = r.Bytes()
	}
	if !ok {
		return at(protocol.InvalidRef, keyAt, "an object key is text, an array or map key is bytes")
	}
	switch {
	case out.Kind == Array && !ValidPosition(key):
		return at(protocol.InvalidPosition, keyAt, "a position is non-empty and does not end in a zero byte")
	case out.Kind == Map && len(key) != len(ID{}):
		return at(protocol.InvalidID, keyAt, "a map key is a 12-byte id")
	}
	out.Key = d.str(key)
	return nil
}

func (d *refDecoder) value(out *Value) error {
	r := &d.r
	switch r.Next() {
	case wire.Uint, wire.NegInt:
		v, _ := r.Int() // Scan kept it within 2^53
		*out = Value{Type: Int, Int: v}
	case wire.Float:
		f, _ := r.Float() // Scan kept it finite and not whole
		*out = Value{Type: Float, Float: f}
	case wire.Text:
		p, _ := r.TextBytes()
		*out = Value{Type: Text, Str: d.str(p)}
	case wire.Bytes:
		p, _ := r.Bytes()
		*out = Value{Type: Bytes, Str: d.str(p)}
	case wire.False, wire.True:
		v, _ := r.Bool()
		*out = Value{Type: Bool, Bool: v}
	case wire.Null:
		r.Null()
		*out = Value{}
	default:
		return d.reference(out)
	}
	return nil
}

func (d *refDecoder) reference(out *Value) error {
	r := &d.r
	refAt := r.Offset()
	n, ok := r.Array()
	if !ok || n != 3 {
		return at(protocol.InvalidReference, refAt, "a reference is an array of an edge, a kind and an id")
	}
	edgeAt := r.Offset()
	e, ok := r.Uint()
	if !ok || e > uint64(Alias) {
		return at(protocol.UnknownEdgeKind, edgeAt, "an edge is 0 attach or 1 alias")
	}
	kindAt := r.Offset()
	k, ok := r.Uint()
	if !ok || k > uint64(Map) {
		return at(protocol.UnknownRefKind, kindAt, "a reference kind is 0 object, 1 array or 2 map")
	}
	idAt := r.Offset()
	if r.Next() != wire.Bytes {
		return at(protocol.InvalidReference, idAt, "a reference names an id")
	}
	ref := Reference{Edge: Edge(e), Kind: Kind(k)}
	if err := d.id(&ref.ID); err != nil {
		return err
	}
	*out = RefTo(ref)
	return nil
}

// agree fails t unless Decode and the reference read b alike.
func agree(t *testing.T, b []byte, l Limits) {
	t.Helper()
	got, err := DecodeWithLimits(b, l)
	want, werr := decodeReference(b, l)
	ge, _ := err.(*protocol.Error)
	we, _ := werr.(*protocol.Error)
	if (err == nil) != (werr == nil) || (err != nil && (ge == nil || we == nil || !reflect.DeepEqual(ge, we))) {
		t.Fatalf("%x: Decode refused with %v, the reference with %v", b, err, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%x: Decode read %+v, the reference %+v", b, got, want)
	}
}

// mutations are b cut short at every length and with each byte replaced by
// bytes that change its type, width or value.
func mutations(b []byte, visit func([]byte)) {
	for n := range len(b) {
		visit(b[:n])
	}
	m := bytes.Clone(b)
	for i, c := range b {
		for _, r := range []byte{0x00, 0x02, 0x03, 0x17, 0x18, 0x1b, 0x1c, 0x1f, 0x20, 0x40, 0x4b, 0x4c, 0x60,
			0x61, 0x80, 0x82, 0x83, 0x84, 0x85, 0x9f, 0xa0, 0xc0, 0xf4, 0xf6, 0xf7, 0xf9, 0xfb, 0xff, c ^ 1, c + 1, c - 1} {
			m[i] = r
			visit(m)
		}
		m[i] = c
	}
	visit(append(m, 0))
}

// The single walk against the two-pass reference over the fixtures, random
// commits and every small mutation of them: the same commit, or the same
// reason at the same offset with the same message.
func TestDecodeAgreesWithReference(t *testing.T) {
	valid, invalid := allFixtureBytes(t)
	seeds := append(valid, invalid...)
	rng := rand.New(rand.NewPCG(21, 22))
	for range 60 {
		b, err := Encode(randCommit(rng, 4))
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, s := range seeds {
		mutations(s, func(b []byte) {
			agree(t, b, Limits{})
			agree(t, b, Limits{MaxDeltas: 2, MaxCommitBytes: 64})
		})
	}
}
