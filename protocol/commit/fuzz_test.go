package commit

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/weftgate/weftgate/protocol"
)

// FuzzDecode: Decode never panics, agrees with the two-pass reference,
// refuses only with a *protocol.Error that has a reason and an offset inside
// the input, and whatever it accepts re-encodes to exactly the same bytes and
// survives the JSON view.
func FuzzDecode(f *testing.F) {
	valid, invalid := allFixtureBytes(f)
	for _, b := range append(valid, invalid...) {
		f.Add(b)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for range 20 {
		b, _ := Encode(randCommit(rng, 6))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		agree(t, b, Limits{})
		c, err := Decode(b)
		if err != nil {
			pe, ok := err.(*protocol.Error)
			if !ok || pe.Reason == "" || pe.Offset < 0 || pe.Offset > len(b) {
				t.Fatalf("Decode(%x) = %#v", b, err)
			}
			return
		}
		out, err := Encode(c)
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("Decode(%x) re-encodes to %x (%v)", b, out, err)
		}
		j, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("JSON of %x: %v", b, err)
		}
		var back Commit
		if err := json.Unmarshal(j, &back); err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("JSON %s read back as %+v (%v), want %+v", j, back, err, c)
		}
	})
}
