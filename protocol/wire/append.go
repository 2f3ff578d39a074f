package wire

import (
	"encoding/binary"
	"math"
)

// appendHead writes a head in the shortest form that holds arg (format.md 6.1).
func appendHead(b []byte, major byte, arg uint64) []byte {
	m := major << 5
	switch {
	case arg < 24:
		return append(b, m|byte(arg))
	case arg <= 0xff:
		return append(b, m|24, byte(arg))
	case arg <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, m|25), uint16(arg))
	case arg <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(b, m|26), uint32(arg))
	}
	return binary.BigEndian.AppendUint64(append(b, m|27), arg)
}

// AppendArray writes the head of an array of n items; the caller writes them.
func AppendArray(b []byte, n int) []byte { return appendHead(b, majorArray, uint64(n)) }

// AppendUint writes v. Above MaxInt it writes bytes Scan refuses.
func AppendUint(b []byte, v uint64) []byte { return appendHead(b, majorUint, v) }

// AppendInt writes v. Outside ValidInt it writes bytes Scan refuses.
func AppendInt(b []byte, v int64) []byte {
	if v >= 0 {
		return appendHead(b, majorUint, uint64(v))
	}
	return appendHead(b, majorNegInt, uint64(-1-v))
}

// AppendFloat writes f the one way the format allows: a whole number within
// plus or minus 2^53 as an integer (so -0 as 0), anything else as a float64.
// NaN and the infinities have no encoding; check ValidFloat first.
func AppendFloat(b []byte, f float64) []byte {
	if wholeInRange(f) {
		return AppendInt(b, int64(f))
	}
	return binary.BigEndian.AppendUint64(append(b, byteFloat64), math.Float64bits(f))
}

// ValidFloat reports whether f has an encoding: it is neither NaN nor infinite.
func ValidFloat(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// AppendBytes writes a byte string.
func AppendBytes(b, v []byte) []byte { return append(appendHead(b, majorBytes, uint64(len(v))), v...) }

// AppendByteString writes a byte string held in a Go string, as commit
// values and keys hold them, without converting it.
func AppendByteString(b []byte, s string) []byte {
	return append(appendHead(b, majorBytes, uint64(len(s))), s...)
}

// AppendText writes a text string. It does not check UTF-8.
func AppendText(b []byte, s string) []byte {
	return append(appendHead(b, majorText, uint64(len(s))), s...)
}

// AppendBool writes false or true.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, byteTrue)
	}
	return append(b, byteFalse)
}

// AppendNull writes null.
func AppendNull(b []byte) []byte { return append(b, byteNull) }
