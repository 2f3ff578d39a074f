package wire

import (
	"encoding/binary"
	"math"
	"unicode/utf8"

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
		if off >= len(b) {
			return fail(protocol.Truncated, off, "the bytes end before the value they promise")
		}
		if depth > 0 {
			left[depth-1]--
		}
		start := off
		ib := b[off]
		major := ib >> 5
		off++
		switch major {
		case majorMap:
			return fail(protocol.UnsupportedMajor, start, "maps are not part of the format")
		case majorTag:
			return fail(protocol.UnsupportedMajor, start, "tags are not part of the format")
		case majorSimple:
			var err error
			if off, err = scanSimple(b, start); err != nil {
				return err
			}
		case majorArray:
			// Judged before the length, as the reference decoder does, so
			// the ninth level is refused whatever its head says.
			if depth >= MaxDepth {
				return fail(protocol.NestingTooDeep, start, "arrays nest past eight levels")
			}
			arg := uint64(ib & 0x1f)
			if arg >= 24 {
				a, n, r := argument(b, off, ib&0x1f)
				if r != "" {
					return fail(r, start, headMessage(r))
				}
				arg = a
				off += n
			}
			// Every item takes at least one byte.
			if arg > uint64(len(b)-off) {
				return fail(protocol.Truncated, start, "an array states more items than the bytes hold")
			}
			if arg > 0 {
				left[depth] = arg
				depth++
				continue
			}
		default:
			arg := uint64(ib & 0x1f)
			if arg >= 24 {
				a, n, r := argument(b, off, ib&0x1f)
				if r != "" {
					return fail(r, start, headMessage(r))
				}
				arg = a
				off += n
			}
			switch major {
			case majorUint:
				if arg > MaxInt {
					return fail(protocol.IntegerOutOfRange, start, "an integer above 2^53 is not exact")
				}
			case majorNegInt:
				if arg >= MaxInt {
					return fail(protocol.IntegerOutOfRange, start, "an integer below -2^53 is not exact")
				}
			default: // bytes or text
				if arg > uint64(len(b)-off) {
					return fail(protocol.Truncated, start, "a string states more bytes than remain")
				}
				end := off + int(arg)
				if major == majorText && !validText(b[off:end]) {
					return fail(protocol.InvalidUTF8, start, "text is not well formed UTF-8")
				}
				off = end
			}
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

// validText is utf8.Valid with an inline first look for the short ASCII
// keys most commits are made of, where the call itself was the cost.
func validText(p []byte) bool {
	var or byte
	for _, c := range p {
		or |= c
	}
	return or < utf8.RuneSelf || utf8.Valid(p)
}

// scanSimple judges a major-7 item at b[start] and returns the offset after it.
func scanSimple(b []byte, start int) (int, error) {
	switch b[start] {
	case byteFalse, byteTrue, byteNull:
		return start + 1, nil
	case byteFloat64:
		if len(b)-start < 9 {
			return 0, fail(protocol.Truncated, start, "a float64 needs eight bytes")
		}
		f := math.Float64frombits(binary.BigEndian.Uint64(b[start+1:]))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fail(protocol.NonFiniteFloat, start, "NaN and the infinities have no encoding")
		}
		if wholeInRange(f) {
			return 0, fail(protocol.NonCanonicalFloat, start, "a whole number within 2^53 is written as an integer")
		}
		return start + 9, nil
	}
	// Half and single floats are refused here too (INDEX.md 8.2), and so is
	// every other major-7 byte: the reference decoder reads no argument for
	// major 7, so 0xfc to 0xff are unsupported simple values, not heads.
	return 0, fail(protocol.UnsupportedSimple, start, "only false, true, null and float64 are simple values of the format")
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
