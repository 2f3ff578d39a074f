package commit

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/weftgate/weftgate/internal/spectest"
	"github.com/weftgate/weftgate/protocol"
)

// Conformance, format.md section 7 points 1, 2 and 4: every fixture's bytes
// decode to its deltas and tag, and its deltas in any order encode to
// exactly its bytes.
func TestConformanceValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, p := range spectest.Files(t, "fixtures") {
		t.Run(fixtureName(p), func(t *testing.T) {
			var f validFixture
			readJSON(t, p, &f)
			if len(f.Commits) == 0 {
				t.Fatal("fixture has no commits")
			}
			for i, fc := range f.Commits {
				b := unhex(t, fc.Bytes)
				want := fixtureCommit(t, fc.Deltas, fc.Tag)
				got, err := Decode(b)
				if err != nil {
					t.Fatalf("commit %d: Decode: %v", i, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("commit %d: decoded\n%+v\nwant\n%+v", i, got, want)
				}
				for _, order := range orders(rng, len(want.Deltas)) {
					c := Commit{Tag: want.Tag}
					for _, j := range order {
						c.Deltas = append(c.Deltas, want.Deltas[j])
					}
					given := slices.Clone(c.Deltas)
					out, err := Encode(c)
					if err != nil {
						t.Fatalf("commit %d order %v: Encode: %v", i, order, err)
					}
					if !bytes.Equal(out, b) {
						t.Fatalf("commit %d order %v: encoded\n%x\nwant\n%x", i, order, out, b)
					}
					if !reflect.DeepEqual(c.Deltas, given) {
						t.Fatalf("commit %d: Encode reordered the caller's deltas", i)
					}
				}
			}
		})
	}
}

func fixtureCommit(t *testing.T, deltas []json.RawMessage, tag *string) Commit {
	t.Helper()
	var c Commit
	for _, raw := range deltas {
		var d Delta
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatalf("fixture delta %s: %v", raw, err)
		}
		c.Deltas = append(c.Deltas, d)
	}
	if tag != nil {
		c.Tag = unhex(t, *tag)
	}
	return c
}

// orders returns the given order, the reverse and several shuffles.
func orders(rng *rand.Rand, n int) [][]int {
	given := make([]int, n)
	for i := range given {
		given[i] = i
	}
	rev := slices.Clone(given)
	slices.Reverse(rev)
	out := [][]int{given, rev}
	for range 6 {
		s := slices.Clone(given)
		rng.Shuffle(n, func(i, j int) { s[i], s[j] = s[j], s[i] })
		out = append(out, s)
	}
	return out
}

// Conformance point 4: decode-stage fixtures are refused for exactly their
// reason; apply-stage fixtures decode (the document refuses them) and
// re-encode to their bytes.
func TestConformanceInvalid(t *testing.T) {
	stages := map[string]int{}
	for _, p := range spectest.Files(t, filepath.Join("fixtures", "invalid")) {
		var f invalidFixture
		readJSON(t, p, &f)
		stages[f.Stage]++
		t.Run(fixtureName(p), func(t *testing.T) {
			b := unhex(t, f.Bytes)
			c, err := Decode(b)
			switch f.Stage {
			case "decode":
				var pe *protocol.Error
				if !asError(err, &pe) {
					t.Fatalf("Decode = %v, want a *protocol.Error %s", err, f.Reason)
				}
				if string(pe.Reason) != f.Reason {
					t.Fatalf("Decode refused with %s (%s at %d), want %s", pe.Reason, pe.Message, pe.Offset, f.Reason)
				}
				if pe.Offset < 0 || pe.Offset > len(b) {
					t.Fatalf("offset %d outside the input", pe.Offset)
				}
			case "apply":
				if err != nil {
					t.Fatalf("apply-stage fixture refused at decode: %v", err)
				}
				out, err := Encode(c)
				if err != nil || !bytes.Equal(out, b) {
					t.Fatalf("re-encoded to %x (%v), want %x", out, err, b)
				}
			default:
				t.Fatalf("unknown stage %q", f.Stage)
			}
		})
	}
	if stages["decode"] == 0 || stages["apply"] == 0 {
		t.Fatalf("stages seen: %v", stages)
	}
}

func asError(err error, pe **protocol.Error) bool {
	e, ok := err.(*protocol.Error)
	*pe = e
	return ok
}

// Random commits: encoding is order-independent, decoding gives back the
// same commit, and what decodes re-encodes to the same bytes.
func TestRandomRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 2000 {
		c := randCommit(rng, 12)
		b, err := Encode(c)
		if err != nil {
			t.Fatalf("#%d: Encode: %v", i, err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("#%d: Decode(%x): %v", i, b, err)
		}
		want := Commit{Deltas: slices.Clone(c.Deltas), Tag: c.Tag}
		slices.SortFunc(want.Deltas, func(a, b Delta) int { return compareDeltas(&a, &b) })
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("#%d: decoded %+v, want %+v", i, got, want)
		}
		for _, order := range orders(rng, len(c.Deltas))[1:3] {
			var s Commit
			s.Tag = c.Tag
			for _, j := range order {
				s.Deltas = append(s.Deltas, c.Deltas[j])
			}
			if again, err := Encode(s); err != nil || !bytes.Equal(again, b) {
				t.Fatalf("#%d: reordered encoding differs: %x (%v)", i, again, err)
			}
		}
	}
}

func TestAppendEncodeKeepsPrefix(t *testing.T) {
	c := Commit{Deltas: []Delta{{Op: Remove, ID: ID{11: 1}, Ref: ObjectKey("k")}}}
	out, err := AppendEncode([]byte{0xaa}, c)
	if err != nil || hex.EncodeToString(out) != "aa"+"818183024c00000000000000000000000182"+"00616b" {
		t.Fatalf("got %x, %v", out, err)
	}
	bad := Commit{Deltas: []Delta{c.Deltas[0], {Op: Add, ID: ID{11: 2}, Ref: ObjectKey("k"), Value: TextValue("\xff")}}}
	out, err = AppendEncode([]byte{0xaa}, bad)
	if protocol.ReasonOf(err) != protocol.InvalidUTF8 || !bytes.Equal(out, []byte{0xaa}) {
		t.Fatalf("refusal left %x, %v", out, err)
	}
}

func TestEncodeRefusals(t *testing.T) {
	id := ID{11: 1}
	ok := Delta{Op: Add, ID: id, Ref: ObjectKey("k"), Value: NullValue()}
	with := func(f func(*Delta)) Commit {
		d := ok
		f(&d)
		return Commit{Deltas: []Delta{d}}
	}
	cases := []struct {
		name string
		c    Commit
		want protocol.Reason
	}{
		{"no deltas", Commit{}, protocol.EmptyCommit},
		{"empty deltas", Commit{Deltas: []Delta{}}, protocol.EmptyCommit},
		{"3-byte tag", Commit{Deltas: []Delta{ok}, Tag: []byte{1, 2, 3}}, protocol.InvalidTag},
		{"33-byte tag", Commit{Deltas: []Delta{ok}, Tag: make([]byte, 33)}, protocol.InvalidTag},
		{"empty tag", Commit{Deltas: []Delta{ok}, Tag: []byte{}}, protocol.InvalidTag},
		{"same slot twice", Commit{Deltas: []Delta{ok, {Op: Replace, ID: id, Ref: ObjectKey("k"), Value: IntValue(1)}}}, protocol.DuplicateSlot},
		{"same slot twice, unsorted", Commit{Deltas: []Delta{ok, {Op: Add, ID: ID{}, Ref: ObjectKey("z")}, {Op: Remove, ID: id, Ref: ObjectKey("k")}}}, protocol.DuplicateSlot},
		{"position ending in zero", with(func(d *Delta) { d.Ref = ArrayKey([]byte{0x40, 0}) }), protocol.InvalidPosition},
		{"empty position", with(func(d *Delta) { d.Ref = ArrayKey(nil) }), protocol.InvalidPosition},
		{"short map key", with(func(d *Delta) { d.Ref = Ref{Kind: Map, Key: "short"} }), protocol.InvalidID},
		{"NaN", with(func(d *Delta) { d.Value = Value{Type: Float, Float: nan()} }), protocol.NonFiniteFloat},
		{"+Inf", with(func(d *Delta) { d.Value = FloatValue(inf()) }), protocol.NonFiniteFloat},
		{"2^53+1", with(func(d *Delta) { d.Value = IntValue(1<<53 + 1) }), protocol.IntegerOutOfRange},
		{"-2^53-1", with(func(d *Delta) { d.Value = IntValue(-1<<53 - 1) }), protocol.IntegerOutOfRange},
		{"bad text", with(func(d *Delta) { d.Value = TextValue("a\xc3\x28") }), protocol.InvalidUTF8},
		{"surrogate text", with(func(d *Delta) { d.Value = TextValue("\xed\xa0\x80") }), protocol.InvalidUTF8},
		{"bad object key", with(func(d *Delta) { d.Ref = ObjectKey("\xc3\x28") }), protocol.InvalidUTF8},
		{"unknown op", with(func(d *Delta) { d.Op = 3 }), protocol.UnknownDeltaType},
		{"unknown ref kind", with(func(d *Delta) { d.Ref.Kind = 3 }), protocol.UnknownRefKind},
		{"unknown reference kind", with(func(d *Delta) { d.Value = RefTo(Reference{Kind: 3}) }), protocol.UnknownRefKind},
		{"unknown edge", with(func(d *Delta) { d.Value = RefTo(Reference{Edge: 2}) }), protocol.UnknownEdgeKind},
		{"unknown value type", with(func(d *Delta) { d.Value = Value{Type: 99} }), protocol.InvalidDelta},
	}
	for _, c := range cases {
		out, err := Encode(c.c)
		if got := protocol.ReasonOf(err); got != c.want || out != nil {
			t.Errorf("%s: %v (%x), want %s", c.name, err, out, c.want)
		}
	}
	// A remove's value is ignored, not refused: it has no place to go.
	rm := Commit{Deltas: []Delta{{Op: Remove, ID: id, Ref: ObjectKey("k"), Value: TextValue("\xff")}}}
	if _, err := Encode(rm); err != nil {
		t.Errorf("remove with a stray value: %v", err)
	}
}

// A whole float within 2^53 has one encoding, the integer, however it is held.
func TestEncodeFloatIsCanonical(t *testing.T) {
	d := Delta{Op: Add, ID: ID{11: 1}, Ref: ObjectKey("k")}
	d.Value = Value{Type: Float, Float: 3}
	a, err := Encode(Commit{Deltas: []Delta{d}})
	if err != nil {
		t.Fatal(err)
	}
	d.Value = IntValue(3)
	b, _ := Encode(Commit{Deltas: []Delta{d}})
	if !bytes.Equal(a, b) {
		t.Fatalf("float 3 wrote %x, int 3 wrote %x", a, b)
	}
}
