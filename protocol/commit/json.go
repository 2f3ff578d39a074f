package commit

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/wire"
)

// The JSON view is the fixtures' shape (spec/fixtures/README.md): a delta is
// {type, id, ref: {kind, key}, value?}; an id is its base64url text; an array
// key, a tag and a byte value are lowercase hex; a map key is an id's text;
// a value is a JSON primitive, {"bytes": hex} or {"ref": id, "kind", "edge"}.
// It is for fixtures, logs and tools, not the wire.

type jsonRef struct {
	Kind Kind   `json:"kind"`
	Key  string `json:"key"`
}

// MarshalJSON writes {"kind", "key"}.
func (r Ref) MarshalJSON() ([]byte, error) {
	j := jsonRef{Kind: r.Kind}
	switch r.Kind {
	case Object:
		if !utf8.ValidString(r.Key) {
			return nil, protocol.Errorf(protocol.InvalidUTF8, "an object key is not UTF-8")
		}
		j.Key = r.Key
	case Array:
		j.Key = hex.EncodeToString([]byte(r.Key))
	case Map:
		if len(r.Key) != len(ID{}) {
			return nil, protocol.Errorf(protocol.InvalidID, "a map key is a 12-byte id")
		}
		j.Key = ID([]byte(r.Key)).String()
	default:
		return nil, protocol.Errorf(protocol.UnknownRefKind, r.Kind.String()+" is not an observable kind")
	}
	return marshalNoEscape(j)
}

// UnmarshalJSON reads {"kind", "key"}, refusing a key its kind does not take.
func (r *Ref) UnmarshalJSON(b []byte) error {
	var j struct {
		Kind string          `json:"kind"`
		Key  json.RawMessage `json:"key"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	kind, err := ParseKind(j.Kind)
	if err != nil {
		return err
	}
	key, err := jsonText(j.Key)
	if protocol.ReasonOf(err) == protocol.InvalidDelta {
		return protocol.Errorf(protocol.InvalidRef, "a ref key is a JSON string")
	}
	if err != nil {
		return err
	}
	switch kind {
	case Array:
		p, err := hex.DecodeString(key)
		if err != nil {
			return protocol.Errorf(protocol.InvalidRef, "an array key is hex")
		}
		if !ValidPosition(p) {
			return protocol.Errorf(protocol.InvalidPosition, "a position is non-empty and does not end in a zero byte")
		}
		key = string(p)
	case Map:
		id, err := ParseID(key)
		if err != nil {
			return err
		}
		key = string(id[:])
	}
	*r = Ref{Kind: kind, Key: key}
	return nil
}

type jsonReference struct {
	Ref  ID   `json:"ref"`
	Kind Kind `json:"kind"`
	Edge Edge `json:"edge"`
}

// MarshalJSON writes a JSON primitive, {"bytes": hex} or a reference.
func (v Value) MarshalJSON() ([]byte, error) {
	switch v.Type {
	case Null:
		return []byte("null"), nil
	case Bool:
		return strconv.AppendBool(nil, v.Bool), nil
	case Int:
		if !wire.ValidInt(v.Int) {
			return nil, protocol.Errorf(protocol.IntegerOutOfRange, "an integer outside 2^53 is not exact")
		}
		return strconv.AppendInt(nil, v.Int, 10), nil
	case Float:
		if !wire.ValidFloat(v.Float) {
			return nil, protocol.Errorf(protocol.NonFiniteFloat, "NaN and the infinities have no encoding")
		}
		// encoding/json spells floats as JavaScript does, which is how the
		// fixtures were written (1e-7, 1e+300, 36028797018963970).
		return json.Marshal(v.Float)
	case Text:
		if !utf8.ValidString(v.Str) {
			return nil, protocol.Errorf(protocol.InvalidUTF8, "text is not UTF-8")
		}
		return marshalNoEscape(v.Str)
	case Bytes:
		return marshalNoEscape(struct {
			Bytes string `json:"bytes"`
		}{hex.EncodeToString([]byte(v.Str))})
	case RefValue:
		return marshalNoEscape(jsonReference{Ref: v.Ref.ID, Kind: v.Ref.Kind, Edge: v.Ref.Edge})
	}
	return nil, protocol.Errorf(protocol.InvalidDelta, fmt.Sprintf("value type %d has no encoding", v.Type))
}

// UnmarshalJSON reads a value. A number that is whole within plus or minus
// 2^53 reads as Int and any other as Float, so 36028797018963970 (2^55 as
// JavaScript prints it) is the float it was written from.
func (v *Value) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return protocol.Errorf(protocol.MissingValue, "no value")
	}
	switch b[0] {
	case 'n', 't', 'f':
		var x *bool
		if err := json.Unmarshal(b, &x); err != nil {
			return err
		}
		if x == nil {
			*v = NullValue()
		} else {
			*v = BoolValue(*x)
		}
		return nil
	case '"':
		s, err := jsonText(b)
		if err != nil {
			return err
		}
		*v = TextValue(s)
		return nil
	case '{':
		return v.unmarshalObject(b)
	case '[':
		return protocol.Errorf(protocol.InvalidDelta, "a value is never a structure (format.md 6.4)")
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	nv, err := numberValue(n.String())
	if err != nil {
		return err
	}
	*v = nv
	return nil
}

func numberValue(s string) (Value, error) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil && wire.ValidInt(i) {
		return IntValue(i), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return Value{}, protocol.Errorf(protocol.NonFiniteFloat, fmt.Sprintf("%s is not a finite float64", s))
	}
	return FloatValue(f), nil
}

func (v *Value) unmarshalObject(b []byte) error {
	var j struct {
		Bytes *string          `json:"bytes"`
		Ref   *ID              `json:"ref"`
		Kind  *json.RawMessage `json:"kind"`
		Edge  *json.RawMessage `json:"edge"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	switch {
	case j.Bytes != nil && j.Ref == nil:
		p, err := hex.DecodeString(*j.Bytes)
		if err != nil {
			return protocol.Errorf(protocol.InvalidDelta, "a byte value is hex")
		}
		*v = BytesValue(p)
		return nil
	case j.Ref != nil && j.Bytes == nil && j.Kind != nil && j.Edge != nil:
		var r Reference
		r.ID = *j.Ref
		if err := json.Unmarshal(*j.Kind, &r.Kind); err != nil {
			return err
		}
		if err := json.Unmarshal(*j.Edge, &r.Edge); err != nil {
			return err
		}
		*v = RefTo(r)
		return nil
	}
	return protocol.Errorf(protocol.InvalidReference, "an object value is {bytes} or {ref, kind, edge}")
}

type jsonDelta struct {
	Type  Op              `json:"type"`
	ID    ID              `json:"id"`
	Ref   Ref             `json:"ref"`
	Value json.RawMessage `json:"value,omitempty"`
}

// MarshalJSON writes {type, id, ref, value}, with no value for a remove.
func (d Delta) MarshalJSON() ([]byte, error) {
	j := jsonDelta{Type: d.Op, ID: d.ID, Ref: d.Ref}
	if d.Op != Remove {
		v, err := d.Value.MarshalJSON()
		if err != nil {
			return nil, err
		}
		j.Value = v
	}
	return marshalNoEscape(j)
}

// UnmarshalJSON reads a delta. A value must be present exactly when the type
// is not remove, as on the wire.
func (d *Delta) UnmarshalJSON(b []byte) error {
	var j struct {
		Type  *Op             `json:"type"`
		ID    *ID             `json:"id"`
		Ref   *Ref            `json:"ref"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	switch {
	case j.Type == nil:
		return protocol.Errorf(protocol.UnknownDeltaType, "a delta has a type")
	case j.ID == nil:
		return protocol.Errorf(protocol.InvalidID, "a delta has an id")
	case j.Ref == nil:
		return protocol.Errorf(protocol.InvalidRef, "a delta has a ref")
	}
	out := Delta{Op: *j.Type, ID: *j.ID, Ref: *j.Ref}
	switch {
	case out.Op == Remove && j.Value != nil:
		return protocol.Errorf(protocol.UnexpectedValue, "a remove carries no value")
	case out.Op != Remove && j.Value == nil:
		return protocol.Errorf(protocol.MissingValue, "an "+out.Op.String()+" carries a value")
	case out.Op != Remove:
		if err := out.Value.UnmarshalJSON(j.Value); err != nil {
			return err
		}
	}
	*d = out
	return nil
}

type jsonCommit struct {
	Deltas []Delta `json:"deltas"`
	Tag    *string `json:"tag,omitempty"`
}

// MarshalJSON writes {"deltas": [...], "tag": hex}, the tag only when present.
// Deltas are written in the order given.
func (c Commit) MarshalJSON() ([]byte, error) {
	j := jsonCommit{Deltas: c.Deltas}
	if j.Deltas == nil {
		j.Deltas = []Delta{}
	}
	if c.Tag != nil {
		t := hex.EncodeToString(c.Tag)
		j.Tag = &t
	}
	return marshalNoEscape(j)
}

// UnmarshalJSON reads a commit; other fields (a fixture's "bytes") are ignored.
func (c *Commit) UnmarshalJSON(b []byte) error {
	var j jsonCommit
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	out := Commit{Deltas: j.Deltas}
	if j.Tag != nil {
		t, err := hex.DecodeString(*j.Tag)
		if err != nil {
			return protocol.Errorf(protocol.InvalidTag, "a tag is hex")
		}
		if len(t) < MinTagBytes || len(t) > MaxTagBytes {
			return protocol.Errorf(protocol.InvalidTag, fmt.Sprintf("a tag is %d to %d bytes, not %d", MinTagBytes, MaxTagBytes, len(t)))
		}
		out.Tag = t
	}
	*c = out
	return nil
}

// marshalNoEscape is json.Marshal without HTML escaping, so text reads as the
// fixtures write it.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// jsonText reads a JSON string strictly. encoding/json would replace invalid
// UTF-8 and unpaired surrogate escapes with U+FFFD, changing the text on its
// way in (format.md 6.3); this refuses them instead.
func jsonText(raw []byte) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", protocol.Errorf(protocol.InvalidDelta, "not a JSON string")
	}
	if !utf8.Valid(raw) {
		return "", protocol.Errorf(protocol.InvalidUTF8, "text is not UTF-8")
	}
	if loneSurrogate(raw) {
		return "", protocol.Errorf(protocol.InvalidUTF8, "text holds an unpaired surrogate")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// loneSurrogate reports whether a JSON string literal has a \u escape of a
// surrogate that is not half of a high-low pair.
func loneSurrogate(raw []byte) bool {
	pendingHigh := false
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			if pendingHigh {
				return true
			}
			continue
		}
		if i+1 >= len(raw) {
			return false // json.Unmarshal refuses it
		}
		if raw[i+1] != 'u' || i+6 > len(raw) {
			if pendingHigh {
				return true
			}
			i++
			continue
		}
		u, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
		if err != nil {
			return false // json.Unmarshal refuses it
		}
		switch {
		case u >= 0xd800 && u < 0xdc00:
			if pendingHigh {
				return true
			}
			pendingHigh = true
		case u >= 0xdc00 && u < 0xe000:
			if !pendingHigh {
				return true
			}
			pendingHigh = false
		default:
			if pendingHigh {
				return true
			}
		}
		i += 5
	}
	return pendingHigh
}
