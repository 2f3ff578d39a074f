package wire

import (
	"encoding/binary"
	"math"
)

// Reader walks bytes that Scan accepted. It trusts their form, but never
// panics on anything: a method whose type does not match the next item, or
// whose item runs past the end, returns ok=false and consumes nothing.
//
// A Reader is a value holding a slice and an offset; copying it forks the walk.
type Reader struct {
	b []byte // what is left to read
	n int    // the length of the whole input
}

// NewReader returns a Reader at the start of b.
func NewReader(b []byte) Reader { return Reader{b: b, n: len(b)} }

// Offset is the offset of the next item.
func (r *Reader) Offset() int { return r.n - len(r.b) }

// Done reports whether every byte has been read.
func (r *Reader) Done() bool { return len(r.b) == 0 }

// peek reads the head at r.off without judging its width: the initial byte,
// the argument and the head's length in bytes. For major 7 the head is the
// one byte and the argument is meaningless. Small enough to inline for the
// common one-byte head.
func (r *Reader) peek() (ib byte, arg uint64, n int, ok bool) {
	if len(r.b) > 0 {
		ib = r.b[0]
		if ib&0x1f < 24 || ib >= 0xe0 {
			return ib, uint64(ib & 0x1f), 1, true
		}
	}
	return peekWide(r.b)
}

func peekWide(b []byte) (ib byte, arg uint64, n int, ok bool) {
	if len(b) == 0 {
		return 0, 0, 0, false
	}
	ib = b[0]
	switch ai := ib & 0x1f; {
	case ai == 24 && len(b) >= 2:
		return ib, uint64(b[1]), 2, true
	case ai == 25 && len(b) >= 3:
		return ib, uint64(binary.BigEndian.Uint16(b[1:])), 3, true
	case ai == 26 && len(b) >= 5:
		return ib, uint64(binary.BigEndian.Uint32(b[1:])), 5, true
	case ai == 27 && len(b) >= 9:
		return ib, binary.BigEndian.Uint64(b[1:]), 9, true
	}
	return 0, 0, 0, false
}

// Next reports the type of the next item without consuming it.
func (r *Reader) Next() Type {
	ib, _, _, ok := r.peek()
	if !ok {
		return Invalid
	}
	switch ib >> 5 {
	case majorUint:
		return Uint
	case majorNegInt:
		return NegInt
	case majorBytes:
		return Bytes
	case majorText:
		return Text
	case majorArray:
		return Array
	case majorSimple:
		switch ib {
		case byteFalse:
			return False
		case byteTrue:
			return True
		case byteNull:
			return Null
		case byteFloat64:
			return Float
		}
	}
	return Invalid
}

// Array consumes an array head and returns its number of items, which the
// caller then reads one by one. A count larger than the bytes left is refused,
// so n is safe to size an allocation by.
func (r *Reader) Array() (n int, ok bool) {
	ib, arg, hn, ok := r.peek()
	if !ok || ib>>5 != majorArray || arg > uint64(len(r.b)-hn) {
		return 0, false
	}
	r.b = r.b[hn:]
	return int(arg), true
}

// Uint consumes an unsigned integer.
func (r *Reader) Uint() (uint64, bool) {
	ib, arg, n, ok := r.peek()
	if !ok || ib>>5 != majorUint {
		return 0, false
	}
	r.b = r.b[n:]
	return arg, true
}

// Int consumes an unsigned or negative integer that fits an int64.
func (r *Reader) Int() (int64, bool) {
	ib, arg, n, ok := r.peek()
	if !ok || arg > math.MaxInt64 {
		return 0, false
	}
	var v int64
	switch ib >> 5 {
	case majorUint:
		v = int64(arg)
	case majorNegInt:
		v = -1 - int64(arg)
	default:
		return 0, false
	}
	r.b = r.b[n:]
	return v, true
}

// Float consumes a float64 (fb). Whole numbers are integers on the wire, so
// a caller wanting any number tries Int first.
func (r *Reader) Float() (float64, bool) {
	if len(r.b) < 9 || r.b[0] != byteFloat64 {
		return 0, false
	}
	f := math.Float64frombits(binary.BigEndian.Uint64(r.b[1:]))
	r.b = r.b[9:]
	return f, true
}

// str consumes a byte or text string of the given major type.
func (r *Reader) str(major byte) ([]byte, bool) {
	ib, arg, n, ok := r.peek()
	if !ok || ib>>5 != major || arg > uint64(len(r.b)-n) {
		return nil, false
	}
	e := n + int(arg)
	s := r.b[n:e:e]
	r.b = r.b[e:]
	return s, true
}

// Bytes consumes a byte string. The result aliases the input, with its
// capacity cut so an append cannot overwrite what follows.
func (r *Reader) Bytes() ([]byte, bool) { return r.str(majorBytes) }

// Text consumes a text string and copies it into a string.
func (r *Reader) Text() (string, bool) {
	b, ok := r.str(majorText)
	return string(b), ok
}

// TextBytes consumes a text string without copying it: the result aliases
// the input, like Bytes.
func (r *Reader) TextBytes() ([]byte, bool) { return r.str(majorText) }

// Bool consumes false or true.
func (r *Reader) Bool() (v bool, ok bool) {
	if len(r.b) == 0 {
		return false, false
	}
	switch r.b[0] {
	case byteFalse:
		r.b = r.b[1:]
		return false, true
	case byteTrue:
		r.b = r.b[1:]
		return true, true
	}
	return false, false
}

// Null consumes null.
func (r *Reader) Null() bool {
	if len(r.b) == 0 || r.b[0] != byteNull {
		return false
	}
	r.b = r.b[1:]
	return true
}

// Skip consumes the next item whole, arrays included. On bytes that are not
// a value it moves to the end, so a loop over Skip always ends.
func (r *Reader) Skip() {
	w := *r
	for need := uint64(1); need > 0; need-- {
		ib, arg, n, ok := w.peek()
		if !ok {
			r.b = r.b[len(r.b):]
			return
		}
		w.b = w.b[n:]
		rest := uint64(len(w.b))
		switch ib >> 5 {
		case majorBytes, majorText:
			if arg > rest {
				r.b = r.b[len(r.b):]
				return
			}
			w.b = w.b[arg:]
		case majorArray:
			if arg > rest {
				r.b = r.b[len(r.b):]
				return
			}
			need += arg
		case majorMap, majorTag:
			r.b = r.b[len(r.b):]
			return
		case majorSimple:
			switch ib {
			case byteFalse, byteTrue, byteNull:
			case byteFloat64:
				if rest < 8 {
					r.b = r.b[len(r.b):]
					return
				}
				w.b = w.b[8:]
			default:
				r.b = r.b[len(r.b):]
				return
			}
		}
	}
	*r = w
}
