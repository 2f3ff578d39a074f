package document

import (
	"math"
	"unicode/utf8"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

// A decoded commit already meets format.md section 6, but Apply also takes
// commits built in Go, so it checks the few rules a hand-built value can
// break, with the decode-stage reason a decoder would have given. None of
// these can be fixed by looking at the document.

// maxExact is 2^53: integers beyond it are not exact (format.md 6.2).
const maxExact = 1 << 53

// fine is the fast yes of wellFormed, for the common case.
func fine(d *commit.Delta) bool {
	switch k := d.Ref.Key; d.Ref.Kind {
	case commit.Object:
		if !ascii(k) && !utf8.ValidString(k) {
			return false
		}
	case commit.Array:
		if k == "" || k[len(k)-1] == 0 {
			return false
		}
	case commit.Map:
		if len(k) != len(commit.ID{}) {
			return false
		}
	default:
		return false
	}
	switch v := &d.Value; {
	case d.Op == commit.Remove:
		return true
	case d.Op > commit.Remove:
		return false
	case v.Type == commit.Null, v.Type == commit.Bool, v.Type == commit.Bytes:
		return true
	case v.Type == commit.Int:
		return v.Int <= maxExact && v.Int >= -maxExact
	case v.Type == commit.Text:
		return ascii(v.Str) || utf8.ValidString(v.Str)
	case v.Type == commit.RefValue:
		return v.Ref.Edge <= commit.Alias && v.Ref.Kind <= commit.Map
	}
	r, _ := wellFormedValue(&d.Value)
	return r == ""
}

// ascii is a quick yes for short ASCII text, the usual key.
func ascii(s string) bool {
	if len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// wellFormed names the first rule a delta breaks, or "".
func wellFormed(d *commit.Delta) (protocol.Reason, string) {
	if d.Op > commit.Remove {
		return protocol.UnknownDeltaType, "delta type " + d.Op.String()
	}
	if r, msg := wellFormedRef(d.Ref); r != "" {
		return r, msg
	}
	if d.Op == commit.Remove {
		return "", ""
	}
	return wellFormedValue(&d.Value)
}

func wellFormedRef(ref commit.Ref) (protocol.Reason, string) {
	switch ref.Kind {
	case commit.Object:
		if !utf8.ValidString(ref.Key) {
			return protocol.InvalidUTF8, "object key is not UTF-8"
		}
	case commit.Array:
		if ref.Key == "" || ref.Key[len(ref.Key)-1] == 0 {
			return protocol.InvalidPosition, "a position is non-empty and does not end in a zero byte"
		}
	case commit.Map:
		if len(ref.Key) != len(commit.ID{}) {
			return protocol.InvalidRef, "a map key is a 12-byte id"
		}
	default:
		return protocol.UnknownRefKind, "ref kind " + ref.Kind.String()
	}
	return "", ""
}

func wellFormedValue(v *commit.Value) (protocol.Reason, string) {
	switch v.Type {
	case commit.Null, commit.Bool, commit.Bytes:
	case commit.Int:
		if v.Int > maxExact || v.Int < -maxExact {
			return protocol.IntegerOutOfRange, "integer outside plus or minus 2^53"
		}
	case commit.Float:
		f := v.Float
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return protocol.NonFiniteFloat, "float is not finite"
		}
		if f == math.Trunc(f) && f <= maxExact && f >= -maxExact {
			return protocol.NonCanonicalFloat, "a whole number in range is an integer"
		}
	case commit.Text:
		if !utf8.ValidString(v.Str) {
			return protocol.InvalidUTF8, "text is not UTF-8"
		}
	case commit.RefValue:
		if v.Ref.Edge > commit.Alias {
			return protocol.UnknownEdgeKind, "reference edge " + v.Ref.Edge.String()
		}
		if v.Ref.Kind > commit.Map {
			return protocol.InvalidReference, "reference kind " + v.Ref.Kind.String()
		}
	default:
		return protocol.UnsupportedMajor, "unknown value type"
	}
	return "", ""
}
