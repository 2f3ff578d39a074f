package wsguard

import (
	"bytes"
	"encoding/binary"
	"testing"
)

var key = [4]byte{1, 2, 3, 4}

// frame is a masked client frame with its length in the given form
// (0: shortest, 2: 16-bit, 8: 64-bit).
func frame(opcode byte, payload []byte, form int) []byte {
	b := []byte{0x80 | opcode}
	switch {
	case form == 8 || form == 0 && len(payload) > 0xffff:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(len(payload)))
	case form == 2 || len(payload) >= 126:
		b = append(b, 0x80|126)
		b = binary.BigEndian.AppendUint16(b, uint16(len(payload)))
	default:
		b = append(b, 0x80|byte(len(payload)))
	}
	b = append(b, key[:]...)
	for i, c := range payload {
		b = append(b, c^key[i%4])
	}
	return b
}

// The offset of the deciding byte is the same however the stream is cut,
// and the frames before it pass whole.
func TestScanStopsAtTheDecidingByte(t *testing.T) {
	var valid []byte
	for _, f := range [][]byte{
		frame(0x2, nil, 0),
		frame(0x2, bytes.Repeat([]byte{0xff}, 125), 0),
		frame(0x1, bytes.Repeat([]byte{'a'}, 126), 0),
		frame(0x2, bytes.Repeat([]byte{0x80}, 70000), 0),
		frame(0x2, []byte{1}, 8),
		frame(0x9, []byte("ping"), 0),
		frame(0x8, nil, 0),
		frame(0x8, []byte{0x03, 0xe8, 0xc3, 0xa9}, 0),
		frame(0x8, append([]byte{0x03, 0xe8}, bytes.Repeat([]byte{0xff}, 200)...), 2), // too long for a close: the library's
	} {
		valid = append(valid, f...)
	}
	unmasked := append([]byte{}, frame(0x2, []byte{1, 2}, 0)...)
	unmasked[1] &^= 0x80
	topBit := frame(0x2, nil, 8)
	topBit[2] |= 0x80
	cases := []struct {
		name string
		bad  []byte
		at   int // offset of the deciding byte within bad
		want *Violation
	}{
		{"valid", nil, 0, nil},
		{"unmasked", unmasked, 1, errUnmasked},
		{"top bit", topBit, 2, errLength},
		{"close reason", frame(0x8, []byte{0x03, 0xe8, 'a', 0xc3}, 0), 2 + 4 + 3, errReason},
	}
	for _, c := range cases {
		stream := append(append([]byte{}, valid...), c.bad...)
		for _, chunk := range []int{1, 2, 3, 7, 64, 4096, len(stream)} {
			var p parser
			passed := 0
			var got *Violation
			for off := 0; off < len(stream) && got == nil; off += chunk {
				b := stream[off:min(off+chunk, len(stream))]
				k, v := p.scan(b)
				passed += k
				got = v
			}
			if got != c.want {
				t.Fatalf("%s, chunks of %d: violation %v, want %v", c.name, chunk, got, c.want)
			}
			want := len(stream)
			if c.want != nil {
				want = len(valid) + c.at
			}
			if passed != want {
				t.Fatalf("%s, chunks of %d: %d bytes passed, want %d", c.name, chunk, passed, want)
			}
		}
	}
}

// Any byte stream, cut anywhere: the same bytes pass and the same
// violation ends it as when it comes whole, and the scan never panics.
func FuzzScan(f *testing.F) {
	f.Add(frame(0x8, []byte{0x03, 0xe8, 0xff}, 0), uint8(1))
	f.Add(append(frame(0x2, bytes.Repeat([]byte{7}, 300), 0), 0x82, 0x7f, 0x80), uint8(5))
	f.Add([]byte{0x82, 0x02, 1, 2}, uint8(3))
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint8) {
		var whole parser
		wantN, wantV := whole.scan(stream)
		var p parser
		n, step := 0, int(chunk)%32+1
		var v *Violation
		for off := 0; off < len(stream) && v == nil; off += step {
			k, got := p.scan(stream[off:min(off+step, len(stream))])
			n += k
			v = got
		}
		if n != wantN || v != wantV {
			t.Fatalf("in chunks of %d: %d bytes, %v; whole: %d bytes, %v", step, n, v, wantN, wantV)
		}
	})
}
