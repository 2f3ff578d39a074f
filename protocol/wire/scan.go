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
		t, arg, ok := short(b, off)
		n := 1
		if !ok {
			var w why
			if t, arg, n, w = head(b, off); w != fine {
				return fail(w.reason(), off, whys[w].msg)
			}
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
// On Invalid, Scan names the reason.
func Head(b []byte, off int) (t Type, arg uint64, n int) {
	if t, arg, ok := short(b, off); ok {
		return t, arg, 1
	}
	t, arg, n, w := head(b, off)
	if w != fine {
		return Invalid, 0, 0
	}
	return t, arg, n
}

// short is head's first look, small enough to inline: a one-byte head of
// majors 0 to 4 (an argument below 24), whose string or array fits in what
// is left. Type counts those majors from Uint in the same order.
func short(b []byte, off int) (Type, uint64, bool) {
	if off < len(b) {
		if ib := b[off]; ib < majorMap<<5 && ib&0x1f < 24 && int(ib&0x1f) < len(b)-off {
			return Type(ib>>5) + Uint, uint64(ib & 0x1f), true
		}
	}
	return Invalid, 0, false
}

// why is the rule an item broke, for Scan to name: a reason and a message.
type why uint8

const (
	fine why = iota
	endsEarly
	endsInHead
	isMap
	isTag
	isSimple
	floatShort
	nonFinite
	wholeFloat
	wideHead
	indefinite
	reservedHead
	aboveMaxInt
	belowMinInt
	arrayTooLong
	stringTooLong
)

var whys = [...]struct {
	r   protocol.Reason
	msg string
}{
	endsEarly:     {protocol.Truncated, "the bytes end before the value they promise"},
	endsInHead:    {protocol.Truncated, "the bytes end inside a head"},
	isMap:         {protocol.UnsupportedMajor, "maps are not part of the format"},
	isTag:         {protocol.UnsupportedMajor, "tags are not part of the format"},
	isSimple:      {protocol.UnsupportedSimple, "only false, true, null and float64 are simple values of the format"},
	floatShort:    {protocol.Truncated, "a float64 needs eight bytes"},
	nonFinite:     {protocol.NonFiniteFloat, "NaN and the infinities have no encoding"},
	wholeFloat:    {protocol.NonCanonicalFloat, "a whole number within 2^53 is written as an integer"},
	wideHead:      {protocol.NonCanonicalInteger, "a head is wider than its argument needs"},
	indefinite:    {protocol.IndefiniteLength, "lengths are always stated"},
	reservedHead:  {protocol.MalformedHead, "additional information 28 to 30 is reserved"},
	aboveMaxInt:   {protocol.IntegerOutOfRange, "an integer above 2^53 is not exact"},
	belowMinInt:   {protocol.IntegerOutOfRange, "an integer below -2^53 is not exact"},
	arrayTooLong:  {protocol.Truncated, "an array states more items than the bytes hold"},
	stringTooLong: {protocol.Truncated, "a string states more bytes than remain"},
}

func (w why) reason() protocol.Reason { return whys[w].r }

// head is Head with the rule an item breaks, judged in the order the
// reference decoder judges them. Callers look with short first.
func head(b []byte, off int) (Type, uint64, int, why) {
	if off >= len(b) {
		return Invalid, 0, 0, endsEarly
	}
	ib := b[off]
	major, ai := ib>>5, ib&0x1f
	rest := uint64(len(b) - off - 1) // the bytes after the initial byte
	switch major {
	case majorMap:
		return Invalid, 0, 0, isMap
	case majorTag:
		return Invalid, 0, 0, isTag
	case majorSimple:
		return simple(b, off)
	}
	// Below 24 the argument is ai; 24 to 27 put it in the next 1, 2, 4 or
	// 8 bytes, most significant first, and it must need that width.
	arg, n := uint64(ai), 1
	switch ai {
	case 24:
		if rest < 1 {
			return Invalid, 0, 0, endsInHead
		}
		arg, n = uint64(b[off+1]), 2
		if arg < 24 {
			return Invalid, 0, 0, wideHead
		}
	case 25:
		if rest < 2 {
			return Invalid, 0, 0, endsInHead
		}
		arg, n = uint64(binary.BigEndian.Uint16(b[off+1:])), 3
		if arg <= 0xff {
			return Invalid, 0, 0, wideHead
		}
	case 26:
		if rest < 4 {
			return Invalid, 0, 0, endsInHead
		}
		arg, n = uint64(binary.BigEndian.Uint32(b[off+1:])), 5
		if arg <= 0xffff {
			return Invalid, 0, 0, wideHead
		}
	case 27:
		if rest < 8 {
			return Invalid, 0, 0, endsInHead
		}
		arg, n = binary.BigEndian.Uint64(b[off+1:]), 9
		if arg <= 0xffffffff {
			return Invalid, 0, 0, wideHead
		}
	case 28, 29, 30:
		return Invalid, 0, 0, reservedHead
	case 31:
		return Invalid, 0, 0, indefinite
	}
	switch major {
	case majorUint:
		if arg > MaxInt {
			return Invalid, 0, 0, aboveMaxInt
		}
	case majorNegInt:
		if arg >= MaxInt {
			return Invalid, 0, 0, belowMinInt
		}
	case majorArray:
		// Every item takes at least one byte.
		if arg > uint64(len(b)-off-n) {
			return Invalid, 0, 0, arrayTooLong
		}
	default: // bytes or text
		if arg > uint64(len(b)-off-n) {
			return Invalid, 0, 0, stringTooLong
		}
	}
	return Type(major) + Uint, arg, n, fine
}

// simple judges the major-7 item at b[off].
func simple(b []byte, off int) (Type, uint64, int, why) {
	switch b[off] {
	case byteFalse:
		return False, 0, 1, fine
	case byteTrue:
		return True, 0, 1, fine
	case byteNull:
		return Null, 0, 1, fine
	case byteFloat64:
		if len(b)-off < 9 {
			return Invalid, 0, 0, floatShort
		}
		bits := binary.BigEndian.Uint64(b[off+1:])
		f := math.Float64frombits(bits)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return Invalid, 0, 0, nonFinite
		}
		if wholeInRange(f) {
			return Invalid, 0, 0, wholeFloat
		}
		return Float, bits, 9, fine
	}
	// Half and single floats are refused here too (INDEX.md 8.2), and so is
	// every other major-7 byte: the reference decoder reads no argument for
	// major 7, so 0xfc to 0xff are unsupported simple values, not heads.
	return Invalid, 0, 0, isSimple
}

// wholeInRange reports whether f must be written as an integer. Negative zero
// counts: it is written as 0.
func wholeInRange(f float64) bool {
	return f == math.Trunc(f) && f >= MinInt && f <= MaxInt
}

func fail(r protocol.Reason, off int, msg string) error {
	return &protocol.Error{Reason: r, Message: msg, Offset: off}
}
