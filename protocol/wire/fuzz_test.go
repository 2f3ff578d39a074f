package wire

import (
	"bytes"
	"encoding/hex"
	"testing"
	"unicode/utf8"

	"github.com/fxamacker/cbor/v2"
)

// FuzzScan: Scan never panics; what it accepts re-encodes to the same bytes;
// the Reader never panics on anything, accepted or not; ValidText agrees with
// utf8.Valid on the bytes.
func FuzzScan(f *testing.F) {
	for _, c := range scanCases {
		b, _ := hex.DecodeString(c.hex)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if ValidText(b) != utf8.Valid(b) {
			t.Fatalf("ValidText(%x) = %v, utf8.Valid disagrees", b, ValidText(b))
		}
		err := Scan(b)
		r := NewReader(b)
		again, ok := reencode(&r, nil)
		if err == nil {
			if !ok || !r.Done() || !bytes.Equal(again, b) {
				t.Fatalf("accepted %x but it re-encodes to %x", b, again)
			}
			var v any
			if err := cbor.Unmarshal(b, &v); err != nil {
				t.Fatalf("accepted %x, which fxamacker/cbor refuses: %v", b, err)
			}
		}
		// Walk arbitrary bytes with every method; none may panic.
		w := NewReader(b)
		for !w.Done() {
			at := w.Offset()
			w.Next()
			w.Array()
			w.Int()
			w.Uint()
			w.Float()
			w.Bytes()
			w.TextBytes()
			w.Bool()
			w.Null()
			if w.Offset() == at {
				w.Skip()
			}
			if w.Offset() <= at {
				t.Fatalf("reader stuck at %d", at)
			}
		}
	})
}
