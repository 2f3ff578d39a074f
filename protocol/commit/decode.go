package commit

import (
	"bytes"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/wire"
)

// Decode reads one commit with the default Limits.
func Decode(b []byte) (Commit, error) { return DecodeWithLimits(b, Limits{}) }

// DecodeWithLimits reads one commit, refusing anything an encoder would not
// have written with the decode-stage reason the fixtures name, as a
// *protocol.Error with the offset of the offending item.
//
// One walk judges the bytes (as wire.Scan would), reads the structure front
// to back as the reference decoder does, and checks the delta order as it
// goes. The walk stops at the first broken rule it meets, but precedence is
// not front to back: a byte-level reason anywhere wins over a structural one
// (INDEX.md 8.1), the order is judged once every delta has been read, and
// the tag after the order. So a refusal is confirmed by wire.Scan, whose
// reason wins when it has one. Past the limits it refuses with
// commit-too-large or too-many-deltas.
//
// The result does not alias b. A large commit's keys and strings are
// slices of one copy of b, so keeping one of them keeps that copy. A small
// commit's deltas and the copies of its strings are cut from memory shared
// with other small commits decoded near it (up to 10 KiB), which stays while
// any of them is held: a holder keeping a few commits for long should Clone
// them, or strings.Clone what it keeps, as document does.
func DecodeWithLimits(b []byte, l Limits) (Commit, error) {
	if len(b) > l.maxCommitBytes() {
		return Commit{}, &protocol.Error{Reason: protocol.CommitTooLarge,
			Message: fmt.Sprintf("a commit of %d bytes is over the limit of %d", len(b), l.maxCommitBytes()), Offset: 0}
	}
	d := decoder{b: b}
	c, err := d.commit(l)
	if d.chunk != nil {
		chunks.Put(d.chunk)
	}
	if err != nil {
		if berr := wire.Scan(b); berr != nil {
			return Commit{}, berr
		}
		return Commit{}, err
	}
	return c, nil
}

// minDelta is the fewest bytes a delta can take: its head, a type, a 12-byte
// id with its head, and a ref of a kind and an empty key.
const minDelta = 1 + 1 + 13 + 1 + 1 + 1

// decoder is one walk over one commit. Items are read with wire.Head, which
// judges their bytes; an item Head refuses reads as wire.Invalid, which no
// caller expects, so it is refused as the structure would be and
// DecodeWithLimits lets wire.Scan name the byte-level reason. The parts
// that have a single spelling (see deltaHead and value) are matched whole.
type decoder struct {
	b      []byte
	text   string // a copy of b[textAt:], made at the first string
	textAt int
	off    int    // the next item
	chunk  *chunk // where a small commit's strings are copied to, one by one
}

// head reads the head of the next item and moves past it.
func (d *decoder) head() (wire.Type, uint64) {
	t, arg, n := wire.Head(d.b, d.off)
	d.off += n
	return t, arg
}

// body consumes the n bytes of the string whose head was just read (Head
// checked them against what is left).
func (d *decoder) body(n uint64) []byte {
	p := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return p
}

// str is the string body p, which ends at d.off, as a string sliced from
// one copy of the commit from its first string on: one allocation and one
// copy for all of a commit's strings.
func (d *decoder) str(p []byte) string {
	if c := d.chunk; c != nil {
		if len(p) == 0 {
			return ""
		}
		t := c.text // room reserved enough for every string
		n := copy(t, p)
		c.text = t[n:]
		return unsafe.String(&t[0], n)
	}
	if d.text == "" {
		d.textAt = d.off - len(p)
		d.text = string(d.b[d.textAt:])
	}
	return d.text[d.off-len(p)-d.textAt : d.off-d.textAt]
}

// commit is format.md 6.8: [deltas] or [deltas, tag].
func (d *decoder) commit(l Limits) (Commit, error) {
	t, parts := d.head()
	if t != wire.Array || parts < 1 || parts > 2 {
		return Commit{}, at(protocol.InvalidCommit, 0, "a commit is an array of its deltas and an optional tag")
	}
	listAt := d.off
	t, n := d.head()
	switch {
	case t != wire.Array:
		return Commit{}, at(protocol.InvalidCommit, listAt, "the deltas are an array")
	case n == 0:
		return Commit{}, at(protocol.EmptyCommit, listAt, "a commit carries at least one delta")
	case n > uint64(l.maxDeltas()):
		return Commit{}, at(protocol.TooManyDeltas, listAt, fmt.Sprintf("%d deltas are over the limit of %d", n, l.maxDeltas()))
	}
	// A count is no more than the bytes left (Head), but a Delta is far
	// bigger than a byte: size by what the bytes can hold, which is exact
	// for any commit that decodes.
	deltas := d.room(min(int(n), (len(d.b)-d.off)/minDelta))
	// A delta past that bound is read into spare, and refused: the deltas
	// before it left it fewer than minDelta bytes.
	var spare Delta
	var order error
	var prev []byte
	for i := range int(n) {
		out := &spare
		if i < len(deltas) {
			out = &deltas[i]
		}
		start := d.off
		slot, err := d.delta(out)
		if err != nil {
			return Commit{}, err
		}
		// 6.9: ascending by the encoding of id then ref, which slot is.
		// Judged after every delta is read, so a later malformed one wins.
		if order == nil && prev != nil {
			switch c := bytes.Compare(prev, slot); {
			case c == 0:
				order = at(protocol.DuplicateSlot, start, "two deltas in one commit address the same slot")
			case c > 0:
				order = at(protocol.DeltasOutOfOrder, start, "deltas are written in ascending order of id, then ref")
			}
		}
		prev = slot
	}
	if order != nil {
		return Commit{}, order
	}
	c := Commit{Deltas: deltas}
	if parts == 2 {
		tagAt := d.off
		t, m := d.head()
		if t != wire.Bytes || m < MinTagBytes || m > MaxTagBytes {
			return Commit{}, at(protocol.InvalidTag, tagAt, fmt.Sprintf("a tag is a byte string of %d to %d bytes", MinTagBytes, MaxTagBytes))
		}
		c.Tag = bytes.Clone(d.body(m))
	}
	if d.off != len(d.b) {
		return Commit{}, at(protocol.TrailingBytes, d.off, "bytes follow the commit")
	}
	return c, nil
}

// delta is format.md 6.7: [type, id, ref] for a remove, [type, id, ref,
// value] otherwise. It returns the bytes of the id and ref, which is what
// canonical order compares.
func (d *decoder) delta(out *Delta) ([]byte, error) {
	start := d.off
	n, err := d.deltaHead(out)
	if err != nil {
		return nil, err
	}
	if err := d.key(&out.Ref); err != nil {
		return nil, err
	}
	// The delta's head and type are one byte each, so the id is two in.
	slot := d.b[start+2 : d.off]
	switch {
	case out.Op == Remove && n != 3:
		return nil, at(protocol.UnexpectedValue, d.off, "a remove carries no value")
	case out.Op != Remove && n != 4:
		return nil, at(protocol.MissingValue, start, "an "+out.Op.String()+" carries a value")
	case out.Op != Remove:
		if err := d.value(&out.Value); err != nil {
			return nil, err
		}
	}
	return slot, nil
}

// deltaHead reads a delta up to the key of its ref: the delta's head, its
// type, its id, the ref's head and kind. It returns the delta's item count.
//
// Those 17 bytes have one spelling in a commit that decodes: 83 or 84, a
// type 00 to 02, 4c and the id's 12 bytes, 82, a kind 00 to 02. They are
// read at once; any other bytes are read item by item to name what is wrong.
// At least 18 bytes must be left, for the two items the ref's head promises.
func (d *decoder) deltaHead(out *Delta) (uint64, error) {
	if p := d.b[d.off:]; len(p) > 17 && (p[0] == 0x83 || p[0] == 0x84) && p[1] <= byte(Remove) &&
		p[2] == 0x4c && p[15] == 0x82 && p[16] <= byte(Map) {
		out.Op = Op(p[1])
		out.ID = ID(p[3:15])
		out.Ref.Kind = Kind(p[16])
		d.off += 17
		return uint64(p[0] & 0x1f), nil
	}
	start := d.off
	t, n := d.head()
	if t != wire.Array || n < 3 || n > 4 {
		return 0, at(protocol.InvalidDelta, start, "a delta is an array of a type, an id, a ref and a value unless it removes")
	}
	opAt := d.off
	t, op := d.head()
	if t != wire.Uint || op > uint64(Remove) {
		return 0, at(protocol.UnknownDeltaType, opAt, "a delta type is 0 add, 1 replace or 2 remove")
	}
	out.Op = Op(op)
	if err := d.id(&out.ID); err != nil {
		return 0, err
	}
	refAt := d.off
	t, m := d.head()
	if t != wire.Array || m != 2 {
		return 0, at(protocol.InvalidRef, refAt, "a ref is an array of a kind and a key")
	}
	kindAt := d.off
	t, k := d.head()
	if t != wire.Uint || k > uint64(Map) {
		return 0, at(protocol.UnknownRefKind, kindAt, "a ref kind is 0 object, 1 array or 2 map")
	}
	out.Ref.Kind = Kind(k)
	return n, nil
}

// id is format.md 6.10.
func (d *decoder) id(out *ID) error {
	idAt := d.off
	t, n := d.head()
	if t != wire.Bytes || n != uint64(len(ID{})) {
		return at(protocol.InvalidID, idAt, "an id is a 12-byte string")
	}
	*out = ID(d.body(n))
	return nil
}

// key reads the key of a ref whose kind is read, format.md 6.5 and 6.6.
func (d *decoder) key(out *Ref) error {
	keyAt := d.off
	want := wire.Bytes
	if out.Kind == Object {
		want = wire.Text
	}
	t, n := d.head()
	if t != want {
		return at(protocol.InvalidRef, keyAt, "an object key is text, an array or map key is bytes")
	}
	key := d.body(n)
	switch {
	case t == wire.Text && !wire.ValidText(key):
		return at(protocol.InvalidUTF8, keyAt, "text is not well formed UTF-8")
	case out.Kind == Array && !ValidPosition(key):
		return at(protocol.InvalidPosition, keyAt, "a position is non-empty and does not end in a zero byte")
	case out.Kind == Map && len(key) != len(ID{}):
		return at(protocol.InvalidID, keyAt, "a map key is a 12-byte id")
	}
	out.Key = d.str(key)
	return nil
}

// value is format.md 6.4: a primitive or a reference. out is zero (a fresh
// Delta's), so only the fields that differ are written: a whole Value
// written to the heap while the GC runs costs a bulk barrier.
func (d *decoder) value(out *Value) error {
	// A reference has one spelling in a commit that decodes: 83, an edge 00
	// or 01, a kind 00 to 02, 4c and the id's 12 bytes. Any other bytes of
	// an array go through reference, which names what is wrong.
	if p := d.b[d.off:]; len(p) >= 16 && p[0] == 0x83 && p[1] <= byte(Alias) && p[2] <= byte(Map) && p[3] == 0x4c {
		out.Type = RefValue
		out.Ref = Reference{Edge: Edge(p[1]), Kind: Kind(p[2]), ID: ID(p[4:16])}
		d.off += 16
		return nil
	}
	valAt := d.off
	t, arg := d.head()
	switch t {
	case wire.Uint:
		out.Type, out.Int = Int, int64(arg) // Head kept it within 2^53
	case wire.NegInt:
		out.Type, out.Int = Int, -1-int64(arg)
	case wire.Float:
		out.Type, out.Float = Float, math.Float64frombits(arg)
	case wire.Text:
		p := d.body(arg)
		if !wire.ValidText(p) {
			return at(protocol.InvalidUTF8, valAt, "text is not well formed UTF-8")
		}
		out.Type, out.Str = Text, d.str(p)
	case wire.Bytes:
		out.Type, out.Str = Bytes, d.str(d.body(arg))
	case wire.False, wire.True:
		out.Type, out.Bool = Bool, t == wire.True
	case wire.Null:
	default:
		return d.reference(out, valAt, t, arg)
	}
	return nil
}

// reference reads a reference item by item once its head (t, n at refAt)
// is read: in a commit that decodes, value has read it already, so this
// names what is wrong.
func (d *decoder) reference(out *Value, refAt int, t wire.Type, n uint64) error {
	if t != wire.Array || n != 3 {
		return at(protocol.InvalidReference, refAt, "a reference is an array of an edge, a kind and an id")
	}
	edgeAt := d.off
	t, e := d.head()
	if t != wire.Uint || e > uint64(Alias) {
		return at(protocol.UnknownEdgeKind, edgeAt, "an edge is 0 attach or 1 alias")
	}
	kindAt := d.off
	t, k := d.head()
	if t != wire.Uint || k > uint64(Map) {
		return at(protocol.UnknownRefKind, kindAt, "a reference kind is 0 object, 1 array or 2 map")
	}
	idAt := d.off
	if t, _, _ := wire.Head(d.b, d.off); t != wire.Bytes {
		return at(protocol.InvalidReference, idAt, "a reference names an id")
	}
	ref := Reference{Edge: Edge(e), Kind: Kind(k)}
	if err := d.id(&ref.ID); err != nil {
		return err
	}
	out.Type, out.Ref = RefValue, ref
	return nil
}

func at(r protocol.Reason, off int, msg string) error {
	return &protocol.Error{Reason: r, Message: msg, Offset: off}
}

// A small commit's deltas, and the copies of its keys and strings, are cut
// from chunks that many small commits share: one allocation a commit was a
// fifth of decoding one (decision 009). Every run is cut once from zeroed
// memory and never handed out again; deltas are typed memory, so a caller
// may write anything into them, and a run is capped so that appending to it
// copies. The bytes are never written after the copy, which is what makes
// an unsafe.String over them sound.
const (
	chunkDeltas = 64   // deltas a chunk holds (6 KiB)
	chunkText   = 4096 // bytes a chunk holds
	smallDeltas = 8    // the most deltas cut from a chunk
	smallText   = 512  // the most bytes cut from a chunk
)

// chunks holds partly cut chunks; each decode takes one for its own use.
var chunks = sync.Pool{New: func() any { return new(chunk) }}

type chunk struct {
	deltas []Delta // not yet cut
	text   []byte
}

// room returns k zero deltas. For a small commit they come from a shared
// chunk, which also takes the copies of its strings (str): room reserves as
// many bytes as the rest of the input, which holds them all.
func (d *decoder) room(k int) []Delta {
	rest := len(d.b) - d.off
	if k > smallDeltas || rest > smallText {
		return make([]Delta, k)
	}
	c := chunks.Get().(*chunk)
	if len(c.deltas) < k {
		c.deltas = make([]Delta, chunkDeltas)
	}
	ds := c.deltas[:k:k]
	c.deltas = c.deltas[k:]
	if len(c.text) < rest {
		c.text = make([]byte, chunkText)
	}
	d.chunk = c
	return ds
}
