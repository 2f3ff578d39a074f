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
	b   []byte
	off int
}

// NewReader returns a Reader at the start of b.
func NewReader(b []byte) Reader { return Reader{b: b} }

// Offset is the offset of the next item.
func (r *Reader) Offset() int { return r.off }

// Done reports whether every byte has been read.
func (r *Reader) Done() bool { return r.off >= len(r.b) }

// peek reads the head at r.off without judging its width: the initial byte,
// the argument and the head's length in bytes. For major 7 the head is the
// one byte and the argument is meaningless. Small enough to inline for the
// common one-byte head.
func (r *Reader) peek() (ib byte, arg uint64, n int, ok bool) {
	if r.off < len(r.b) {
		ib = r.b[r.off]
		if ib&0x1f < 24 || ib>>5 == majorSimple {
			return ib, uint64(ib & 0x1f), 1, true
		}
	}
	return r.peekWide()
}

func (r *Reader) peekWide() (ib byte, arg uint64, n int, ok bool) {
	b, off := r.b, r.off
	if off >= len(b) {
		return 0, 0, 0, false
	}
	ib = b[off]
	rest := len(b) - off - 1
	switch ai := ib & 0x1f; {
	case ai == 24 && rest >= 1:
		return ib, uint64(b[off+1]), 2, true
	case ai == 25 && rest >= 2:
		return ib, uint64(binary.BigEndian.Uint16(b[off+1:])), 3, true
	case ai == 26 && rest >= 4:
		return ib, uint64(binary.BigEndian.Uint32(b[off+1:])), 5, true
	case ai == 27 && rest >= 8:
		return ib, binary.BigEndian.Uint64(b[off+1:]), 9, true
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
	if !ok || ib>>5 != majorArray || arg > uint64(len(r.b)-r.off-hn) {
		return 0, false
	}
	r.off += hn
	return int(arg), true
}

// Uint consumes an unsigned integer.
func (r *Reader) Uint() (uint64, bool) {
	ib, arg, n, ok := r.peek()
	if !ok || ib>>5 != majorUint {
		return 0, false
	}
	r.off += n
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
	r.off += n
	return v, true
}

// Float consumes a float64 (fb). Whole numbers are integers on the wire, so
// a caller wanting any number tries Int first.
func (r *Reader) Float() (float64, bool) {
	if r.off >= len(r.b) || r.b[r.off] != byteFloat64 || len(r.b)-r.off < 9 {
		return 0, false
	}
	f := math.Float64frombits(binary.BigEndian.Uint64(r.b[r.off+1:]))
	r.off += 9
	return f, true
}

// str consumes a byte or text string of the given major type.
func (r *Reader) str(major byte) ([]byte, bool) {
	ib, arg, n, ok := r.peek()
	if !ok || ib>>5 != major || arg > uint64(len(r.b)-r.off-n) {
		return nil, false
	}
	s := r.off + n
	e := s + int(arg)
	r.off = e
	return r.b[s:e:e], true
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
	if r.off >= len(r.b) {
		return false, false
	}
	switch r.b[r.off] {
	case byteFalse:
		r.off++
		return false, true
	case byteTrue:
		r.off++
		return true, true
	}
	return false, false
}

// Null consumes null.
func (r *Reader) Null() bool {
	if r.off >= len(r.b) || r.b[r.off] != byteNull {
		return false
	}
	r.off++
	return true
}

// Skip consumes the next item whole, arrays included. On bytes that are not
// a value it moves to the end, so a loop over Skip always ends.
func (r *Reader) Skip() {
	end := len(r.b)
	w := *r
	for need := uint64(1); need > 0; need-- {
		ib, arg, n, ok := w.peek()
		if !ok {
			r.off = end
			return
		}
		w.off += n
		rest := uint64(end - w.off)
		switch ib >> 5 {
		case majorBytes, majorText:
			if arg > rest {
				r.off = end
				return
			}
			w.off += int(arg)
		case majorArray:
			if arg > rest {
				r.off = end
				return
			}
			need += arg
		case majorMap, majorTag:
			r.off = end
			return
		case majorSimple:
			switch ib {
			case byteFalse, byteTrue, byteNull:
			case byteFloat64:
				if rest < 8 {
					r.off = end
					return
				}
				w.off += 8
			default:
				r.off = end
				return
			}
		}
	}
	r.off = w.off
}
