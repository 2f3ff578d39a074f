package commit

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/wire"
)

// ID is an observable id: 12 bytes from a CSPRNG (identity.md).
type ID [12]byte

// NewID mints an id from crypto/rand. There is no other source and no way to
// replace it (identity.md section 1); tests that need fixed ids build them.
func NewID() ID {
	var id ID
	rand.Read(id[:]) // never fails: the runtime aborts if the OS source does
	return id
}

// String is the 16-character base64url text form, without padding.
func (id ID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// ParseID reads the text form. It refuses with reason invalid-id.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 16 {
		return id, protocol.Errorf(protocol.InvalidID, fmt.Sprintf("id %q is not 16 base64url characters", s))
	}
	n, err := base64.RawURLEncoding.Decode(id[:], []byte(s))
	if err != nil || n != 12 {
		return id, protocol.Errorf(protocol.InvalidID, fmt.Sprintf("id %q is not base64url", s))
	}
	return id, nil
}

// Kind is an observable's kind, fixed for life (format.md 1.2).
type Kind uint8

const (
	Object Kind = 0
	Array  Kind = 1
	Map    Kind = 2
)

func (k Kind) String() string {
	switch k {
	case Object:
		return "object"
	case Array:
		return "array"
	case Map:
		return "map"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Edge says whether a reference is where an observable lives (attach) or only
// names it (alias), format.md 1.1.
type Edge uint8

const (
	Attach Edge = 0
	Alias  Edge = 1
)

func (e Edge) String() string {
	switch e {
	case Attach:
		return "attach"
	case Alias:
		return "alias"
	}
	return fmt.Sprintf("edge(%d)", uint8(e))
}

// Ref addresses a slot inside an observable. Key holds the raw key: the text
// of an object key, the bytes of an array position, or the 12 bytes of a map
// key id. A string keeps Ref comparable, so it can key a map.
type Ref struct {
	Kind Kind
	Key  string
}

// Reference is a value that points at an observable.
type Reference struct {
	Edge Edge
	Kind Kind
	ID   ID
}

// ValueType tells which field of a Value is set.
type ValueType uint8

const (
	Null ValueType = iota
	Bool
	Int
	Float
	Text
	Bytes
	RefValue
)

// Value is a slot's value: a primitive or a reference. Values compare with ==
// (floats are never NaN; bytes and text are held in Str).
type Value struct {
	Type  ValueType
	Bool  bool
	Ref   Reference // beside Type and Bool, which it packs with (48 bytes, not 56)
	Int   int64
	Float float64
	Str   string // Text or Bytes
}

// Op is a delta's type.
type Op uint8

const (
	Add     Op = 0
	Replace Op = 1
	Remove  Op = 2
)

func (o Op) String() string {
	switch o {
	case Add:
		return "add"
	case Replace:
		return "replace"
	case Remove:
		return "remove"
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Delta is one change to one slot (format.md section 2). Value is ignored for
// Remove.
type Delta struct {
	Op    Op
	ID    ID
	Ref   Ref
	Value Value
}

// Commit is a set of deltas that took effect together, with the optional
// integrity tag carried untouched (nil when absent).
type Commit struct {
	Deltas []Delta
	Tag    []byte
}

// Clone is a deep copy of c in memory of its own: a decoded commit shares
// its memory with others decoded near it (DecodeWithLimits), so a holder
// that keeps a few for long clones them.
func (c Commit) Clone() Commit {
	out := Commit{Deltas: slices.Clone(c.Deltas), Tag: bytes.Clone(c.Tag)}
	for i := range out.Deltas {
		d := &out.Deltas[i]
		d.Ref.Key = strings.Clone(d.Ref.Key)
		d.Value.Str = strings.Clone(d.Value.Str)
	}
	return out
}

// Constructors for values, so callers need not know the layout.
func NullValue() Value       { return Value{Type: Null} }
func BoolValue(b bool) Value { return Value{Type: Bool, Bool: b} }
func IntValue(i int64) Value { return Value{Type: Int, Int: i} }

// FloatValue normalises as the encoding does (format.md 6.2): a whole number
// within plus or minus 2^53 is an Int, and -0 is 0, so equal numbers give
// equal Values. NaN and the infinities stay Float; Encode refuses them.
func FloatValue(f float64) Value {
	if f == math.Trunc(f) && f >= wire.MinInt && f <= wire.MaxInt {
		return Value{Type: Int, Int: int64(f)}
	}
	return Value{Type: Float, Float: f}
}

func TextValue(s string) Value  { return Value{Type: Text, Str: s} }
func BytesValue(b []byte) Value { return Value{Type: Bytes, Str: string(b)} }
func RefTo(r Reference) Value   { return Value{Type: RefValue, Ref: r} }
func ObjectKey(k string) Ref    { return Ref{Kind: Object, Key: k} }
func ArrayKey(pos []byte) Ref   { return Ref{Kind: Array, Key: string(pos)} }
func MapKey(id ID) Ref          { return Ref{Kind: Map, Key: string(id[:])} }
