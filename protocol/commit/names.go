package commit

import (
	"fmt"

	"github.com/weftgate/weftgate/protocol"
)

// The spec's words for kinds, edges and delta types, as the JSON view and
// the fixtures write them. Parsing refuses with the reason the byte decoder
// would give for an unknown number.

// ParseKind reads "object", "array" or "map".
func ParseKind(s string) (Kind, error) {
	switch s {
	case "object":
		return Object, nil
	case "array":
		return Array, nil
	case "map":
		return Map, nil
	}
	return 0, protocol.Errorf(protocol.UnknownRefKind, fmt.Sprintf("%q is not an observable kind", s))
}

// ParseEdge reads "attach" or "alias".
func ParseEdge(s string) (Edge, error) {
	switch s {
	case "attach":
		return Attach, nil
	case "alias":
		return Alias, nil
	}
	return 0, protocol.Errorf(protocol.UnknownEdgeKind, fmt.Sprintf("%q is not an edge kind", s))
}

// ParseOp reads "add", "replace" or "remove".
func ParseOp(s string) (Op, error) {
	switch s {
	case "add":
		return Add, nil
	case "replace":
		return Replace, nil
	case "remove":
		return Remove, nil
	}
	return 0, protocol.Errorf(protocol.UnknownDeltaType, fmt.Sprintf("%q is not a delta type", s))
}

func (k Kind) valid() bool { return k <= Map }
func (e Edge) valid() bool { return e <= Alias }
func (o Op) valid() bool   { return o <= Remove }

// MarshalText writes the spec's word; an unknown kind has none.
func (k Kind) MarshalText() ([]byte, error) {
	if !k.valid() {
		return nil, protocol.Errorf(protocol.UnknownRefKind, k.String()+" has no name")
	}
	return []byte(k.String()), nil
}

func (k *Kind) UnmarshalText(b []byte) (err error) { *k, err = ParseKind(string(b)); return }

// MarshalText writes the spec's word; an unknown edge has none.
func (e Edge) MarshalText() ([]byte, error) {
	if !e.valid() {
		return nil, protocol.Errorf(protocol.UnknownEdgeKind, e.String()+" has no name")
	}
	return []byte(e.String()), nil
}

func (e *Edge) UnmarshalText(b []byte) (err error) { *e, err = ParseEdge(string(b)); return }

// MarshalText writes the spec's word; an unknown op has none.
func (o Op) MarshalText() ([]byte, error) {
	if !o.valid() {
		return nil, protocol.Errorf(protocol.UnknownDeltaType, o.String()+" has no name")
	}
	return []byte(o.String()), nil
}

func (o *Op) UnmarshalText(b []byte) (err error) { *o, err = ParseOp(string(b)); return }

// MarshalText writes the 16-character text form, so an ID reads the same in
// JSON as in the fixtures, as a value or as an object key.
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

func (id *ID) UnmarshalText(b []byte) (err error) { *id, err = ParseID(string(b)); return }
