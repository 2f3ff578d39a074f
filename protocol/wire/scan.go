package wire

import (
	"encoding/binary"
	"math"

	"github.com/weftgate/weftgate/protocol"
)

// Scan checks that b holds exactly one value an encoder of format.md
// section 6 would have written, and nothing after it. It refuses with a
// *protocol.Error carrying the spec's reason and the offset of the offending
// item. Precedence follows the reference decoder: a value is judged as it is
// read, front to back, so the first broken rule wins.
//
// Scan does not allocate unless it refuses, and never allocates from a length
// it reads: a stated length is checked against the bytes that remain.
func Scan(b []byte) error {
	// left[d] counts the items still to start in the array open at depth d.
	var left [MaxDepth]uint64
	depth := 0
	off := 0
	for {
		if depth > 0 {
			left[depth-1]--
		}
		// Judged before the head, as the reference decoder does, so the
		// ninth level is refused whatever its head says.
		if depth >= MaxDepth && off < len(b) && b[off]>>5 == majorArray {
			return fail(protocol.NestingTooDeep, off, "arrays nest past eight levels")
		}
		t, arg, n := Head(b, off)
		if t == Invalid {
			return refusal(b, off)
		}
		off += n
		switch t {
		case Array:
			if arg > 0 {
				left[depth] = arg
				depth++
				continue
			}
		case Text:
			end := off + int(arg)
			if !ValidText(b[off:end]) {
				return fail(protocol.InvalidUTF8, off-n, "text is not well formed UTF-8")
			}
			off = end
		case Bytes:
			off += int(arg)
		}
		// An item ended: close every array whose last item it was.
		for depth > 0 && left[depth-1] == 0 {
			depth--
		}
		if depth == 0 {
			if off != len(b) {
				return fail(protocol.TrailingBytes, off, "bytes follow the value")
			}
			return nil
		}
	}
}

// Head reads the head of the item at b[off] and judges it as Scan does, for
// a decoder that checks the bytes in the same walk that reads them. It
// returns the item's type, its argument and the head's length in bytes, or
// Invalid (and n 0) when Scan would refuse the item at off for anything but
// its contents: a head Scan refuses, an integer out of range, a float64 that
// is not finite or is whole, a simple value outside the four, or a string or
// array longer than the bytes after its head. What it does not judge is
// whether text is UTF-8 (ValidText), nesting, and trailing bytes.
//
// For Uint and NegInt arg is the argument; for Bytes, Text and Array the
// length; for Float the bits, and n counts the eight bytes after the head.
//
// The one-byte heads are read inline; on Invalid, Scan names the reason.
func Head(b []byte, off int) (t Type, arg uint64, n int) {
	// Majors 0 to 4 with the argument in the initial byte; Type counts those
	// majors from Uint in the same order. The length test is only needed for
	// strings and arrays, and is harmless for integers.
	if off < len(b) {
		if ib := b[off]; ib < majorMap<<5 && ib&0x1f < 24 && int(ib&0x1f) < len(b)-off {
			return Type(ib>>5) + Uint, uint64(ib & 0x1f), 1
		}
	}
	return headWide(b, off)
}

func headWide(b []byte, off int) (Type, uint64, int) {
	t, arg, n, err := head(b, off)
	if err != nil {
		return Invalid, 0, 0
	}
	return t, arg, n
}

// refusal is the error of the item at b[off], which Head refused.
func refusal(b []byte, off int) error {
	_, _, _, err := head(b, off)
	return err
}

// head is Head with the reason for a refusal. It allocates only to refuse.
func head(b []byte, off int) (Type, uint64, int, error) {
	if off >= len(b) {
		return Invalid, 0, 0, fail(protocol.Truncated, off, "the bytes end before the value they promise")
	}
	ib := b[off]
	major := ib >> 5
	switch major {
	case majorMap:
		return Invalid, 0, 0, fail(protocol.UnsupportedMajor, off, "maps are not part of the format")
	case majorTag:
		return Invalid, 0, 0, fail(protocol.UnsupportedMajor, off, "tags are not part of the format")
	case majorSimple:
		return simple(b, off)
	}
	arg, n, r := argument(b, off+1, ib&0x1f)
	if r != "" {
		return Invalid, 0, 0, fail(r, off, headMessage(r))
	}
	n++
	switch major {
	case majorUint:
		if arg > MaxInt {
			return Invalid, 0, 0, fail(protocol.IntegerOutOfRange, off, "an integer above 2^53 is not exact")
		}
	case majorNegInt:
		if arg >= MaxInt {
			return Invalid, 0, 0, fail(protocol.IntegerOutOfRange, off, "an integer below -2^53 is not exact")
		}
	case majorArray:
		// Every item takes at least one byte.
		if arg > uint64(len(b)-off-n) {
			return Invalid, 0, 0, fail(protocol.Truncated, off, "an array states more items than the bytes hold")
		}
	default: // bytes or text
		if arg > uint64(len(b)-off-n) {
			return Invalid, 0, 0, fail(protocol.Truncated, off, "a string states more bytes than remain")
		}
	}
	return Type(major) + Uint, arg, n, nil
}

// simple judges the major-7 item at b[off].
func simple(b []byte, off int) (Type, uint64, int, error) {
	switch b[off] {
	case byteFalse:
		return False, 0, 1, nil
	case byteTrue:
		return True, 0, 1, nil
	case byteNull:
		return Null, 0, 1, nil
	case byteFloat64:
		if len(b)-off < 9 {
			return Invalid, 0, 0, fail(protocol.Truncated, off, "a float64 needs eight bytes")
		}
		bits := binary.BigEndian.Uint64(b[off+1:])
		f := math.Float64frombits(bits)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return Invalid, 0, 0, fail(protocol.NonFiniteFloat, off, "NaN and the infinities have no encoding")
		}
		if wholeInRange(f) {
			return Invalid, 0, 0, fail(protocol.NonCanonicalFloat, off, "a whole number within 2^53 is written as an integer")
		}
		return Float, bits, 9, nil
	}
	// Half and single floats are refused here too (INDEX.md 8.2), and so is
	// every other major-7 byte: the reference decoder reads no argument for
	// major 7, so 0xfc to 0xff are unsupported simple values, not heads.
	return Invalid, 0, 0, fail(protocol.UnsupportedSimple, off, "only false, true, null and float64 are simple values of the format")
}

// wholeInRange reports whether f must be written as an integer. Negative zero
// counts: it is written as 0.
func wholeInRange(f float64) bool {
	return f == math.Trunc(f) && f >= MinInt && f <= MaxInt
}

// argument reads the argument whose additional information is ai and whose
// extra bytes start at b[off]. It returns the argument, the number of extra
// bytes, and a reason when the head is not in shortest form or not a head.
func argument(b []byte, off int, ai byte) (uint64, int, protocol.Reason) {
	rest := len(b) - off
	switch {
	case ai < 24:
		return uint64(ai), 0, ""
	case ai == 24:
		if rest < 1 {
			return 0, 0, protocol.Truncated
		}
		v := uint64(b[off])
		if v < 24 {
			return 0, 0, protocol.NonCanonicalInteger
		}
		return v, 1, ""
	case ai == 25:
		if rest < 2 {
			return 0, 0, protocol.Truncated
		}
		v := uint64(binary.BigEndian.Uint16(b[off:]))
		if v <= 0xff {
			return 0, 0, protocol.NonCanonicalInteger
		}
		return v, 2, ""
	case ai == 26:
		if rest < 4 {
			return 0, 0, protocol.Truncated
		}
		v := uint64(binary.BigEndian.Uint32(b[off:]))
		if v <= 0xffff {
			return 0, 0, protocol.NonCanonicalInteger
		}
		return v, 4, ""
	case ai == 27:
		if rest < 8 {
			return 0, 0, protocol.Truncated
		}
		v := binary.BigEndian.Uint64(b[off:])
		if v <= 0xffffffff {
			return 0, 0, protocol.NonCanonicalInteger
		}
		return v, 8, ""
	case ai == 31:
		return 0, 0, protocol.IndefiniteLength
	}
	return 0, 0, protocol.MalformedHead
}

func headMessage(r protocol.Reason) string {
	switch r {
	case protocol.Truncated:
		return "the bytes end inside a head"
	case protocol.NonCanonicalInteger:
		return "a head is wider than its argument needs"
	case protocol.IndefiniteLength:
		return "lengths are always stated"
	}
	return "additional information 28 to 30 is reserved"
}

func fail(r protocol.Reason, off int, msg string) error {
	return &protocol.Error{Reason: r, Message: msg, Offset: off}
}
