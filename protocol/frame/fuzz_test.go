package frame_test

import (
	"bytes"
	"testing"

	"github.com/weftgate/weftgate/internal/spectest"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/frame"
)

// FuzzDecode: Decode never panics, every refusal has a reason, and whatever
// decodes re-encodes to exactly the bytes it came from.
func FuzzDecode(f *testing.F) {
	for _, path := range spectest.Files(f, "frames") {
		_, b := loadFixture(f, path)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := frame.Decode(b)
		if err != nil {
			if protocol.ReasonOf(err) == "" {
				t.Fatalf("Decode(%x) refused without a reason: %v", b, err)
			}
			return
		}
		out, err := frame.Encode(fr)
		if err != nil {
			t.Fatalf("Decode(%x) = %+v, which does not encode: %v", b, fr, err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("Decode(%x) = %+v re-encodes to %x", b, fr, out)
		}
	})
}
