package pbconv

import (
	"testing"

	"google.golang.org/protobuf/proto"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

// FuzzDeltaFrom: a delta a backend sends, as arbitrary proto bytes, is
// refused with a reason or read strictly: what is read writes back to the
// same delta, and the aweft codec carries it (encodes, and decodes to it).
func FuzzDeltaFrom(f *testing.F) {
	id := commit.ID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	for _, d := range []commit.Delta{
		{Op: commit.Add, ID: id, Ref: commit.ObjectKey("title"), Value: commit.TextValue("é")},
		{Op: commit.Replace, ID: id, Ref: commit.ArrayKey([]byte{0x80}), Value: commit.FloatValue(0.5)},
		{Op: commit.Remove, ID: id, Ref: commit.MapKey(id)},
		{Op: commit.Add, ID: id, Ref: commit.ObjectKey("x"), Value: commit.RefTo(commit.Reference{Edge: commit.Attach, Kind: commit.Map, ID: id})},
		{Op: commit.Add, ID: id, Ref: commit.ObjectKey("n"), Value: commit.IntValue(1 << 53)},
	} {
		b, err := proto.Marshal(deltaTo(d))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p v1.Delta
		if proto.Unmarshal(b, &p) != nil {
			return
		}
		d, err := DeltaFrom(&p)
		if err != nil {
			if protocol.ReasonOf(err) == "" {
				t.Fatalf("refused without a reason: %v", err)
			}
			return
		}
		again, err := DeltaFrom(deltaTo(d))
		if err != nil || again != d {
			t.Fatalf("%+v writes back as %+v (%v)", d, again, err)
		}
		enc, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{d}})
		if err != nil {
			t.Fatalf("%+v was read but does not encode: %v", d, err)
		}
		c, err := commit.Decode(enc)
		if err != nil || len(c.Deltas) != 1 || c.Deltas[0] != d {
			t.Fatalf("%+v encodes to %x, which decodes to %+v (%v)", d, enc, c.Deltas, err)
		}
	})
}

func deltaTo(d commit.Delta) *v1.Delta {
	p := &v1.Delta{Type: OpTo(d.Op), Id: IDTo(d.ID), Ref: RefTo(d.Ref)}
	if d.Op != commit.Remove {
		p.Value = ValueTo(d.Value)
	}
	return p
}
