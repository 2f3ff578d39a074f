package commit

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/weftgate/weftgate/protocol"
)

const (
	hid1 = "4c000000000000000000000001"
	hid2 = "4c000000000000000000000002"
	hk   = "82006161" // ref object "a"
	hkb  = "82006162" // ref object "b"
)

// commitHex wraps deltas (hex) in a commit, with an optional tag (hex item).
func commitHex(tag string, deltas ...string) string {
	h := "81"
	if tag != "" {
		h = "82"
	}
	h += fmt.Sprintf("%02x", 0x80+len(deltas)) + strings.Join(deltas, "")
	return h + tag
}

func add(id, ref, val string) string { return "8400" + id + ref + val }

func TestDecodeRefusals(t *testing.T) {
	ok := add(hid1, hk, "01")
	cases := []struct {
		name string
		hex  string
		want protocol.Reason
	}{
		{"empty array", "80", protocol.InvalidCommit},
		{"a number", "00", protocol.InvalidCommit},
		{"three parts", "83" + "81" + ok + "4401020304" + "00", protocol.InvalidCommit},
		{"deltas not an array", "8100", protocol.InvalidCommit},
		{"deltas are text", "816161", protocol.InvalidCommit},
		{"no deltas, with a tag", "82" + "80" + "4401020304", protocol.EmptyCommit},
		{"delta is a number", "818100", protocol.InvalidDelta},
		{"delta of two", "8181" + "8200" + hid1, protocol.InvalidDelta},
		{"delta of five", "8181" + "8500" + hid1 + hk + "0101", protocol.InvalidDelta},
		{"type is text", "8181" + "846161" + hid1 + hk + "01", protocol.UnknownDeltaType},
		{"type is -1", "8181" + "8420" + hid1 + hk + "01", protocol.UnknownDeltaType},
		{"type is 0.5", "8181" + "84fb3fe0000000000000" + hid1 + hk + "01", protocol.UnknownDeltaType},
		{"id is text", "8181" + "8400" + "6c" + strings.Repeat("61", 12) + hk + "01", protocol.InvalidID},
		{"id of 13 bytes", "8181" + "8400" + "4d" + strings.Repeat("00", 13) + hk + "01", protocol.InvalidID},
		{"ref of one", "8181" + "8400" + hid1 + "8100" + "01", protocol.InvalidRef},
		{"ref of three", "8181" + "8400" + hid1 + "8300616100" + "01", protocol.InvalidRef},
		{"ref kind is text", "8181" + "8400" + hid1 + "8261616161" + "01", protocol.UnknownRefKind},
		{"ref kind 24", "8181" + "8400" + hid1 + "8218186161" + "01", protocol.UnknownRefKind},
		{"object key is bytes", "8181" + "8400" + hid1 + "82004161" + "01", protocol.InvalidRef},
		{"array key is text", "8181" + "8400" + hid1 + "82016161" + "01", protocol.InvalidRef},
		{"map key is text", "8181" + "8400" + hid1 + "8202" + "6c" + strings.Repeat("61", 12) + "01", protocol.InvalidRef},
		{"map key of 11 bytes", "8181" + "8400" + hid1 + "8202" + "4b" + strings.Repeat("00", 11) + "01", protocol.InvalidID},
		{"reference of two", "8181" + add(hid1, hk, "8200"+hid2), protocol.InvalidReference},
		{"reference of four", "8181" + add(hid1, hk, "840000"+hid2+"00"), protocol.InvalidReference},
		{"reference edge 2", "8181" + add(hid1, hk, "830200"+hid2), protocol.UnknownEdgeKind},
		{"reference edge is an array", "8181" + add(hid1, hk, "83800000"), protocol.UnknownEdgeKind},
		{"reference kind 3", "8181" + add(hid1, hk, "830003"+hid2), protocol.UnknownRefKind},
		{"reference id is text", "8181" + add(hid1, hk, "8300006161"), protocol.InvalidReference},
		{"reference id of 2 bytes", "8181" + add(hid1, hk, "830000420102"), protocol.InvalidID},
		{"replace without value", "8181" + "8301" + hid1 + hk, protocol.MissingValue},
		{"remove with value", "8181" + "8402" + hid1 + hk + "01", protocol.UnexpectedValue},
		{"tag is text", commitHex("6461626364", ok), protocol.InvalidTag},
		{"tag of 3", commitHex("43010203", ok), protocol.InvalidTag},
		{"tag of 33", commitHex("5821"+strings.Repeat("00", 33), ok), protocol.InvalidTag},
		{"same slot", commitHex("", ok, "8401"+hid1+hk+"02"), protocol.DuplicateSlot},
		{"ids out of order", commitHex("", add(hid2, hk, "01"), ok), protocol.DeltasOutOfOrder},
		{"refs out of order", commitHex("", add(hid1, hkb, "01"), ok), protocol.DeltasOutOfOrder},
		{"longer key first", commitHex("", add(hid1, "8200626161", "01"), add(hid1, "82006162", "01")), protocol.DeltasOutOfOrder},
		{"map ref before object ref", commitHex("", add(hid1, "8202"+hid2, "01"), ok), protocol.DeltasOutOfOrder},
		// Precedence: the order is judged after every delta is read, and the
		// tag after the order; a byte-level reason beats everything.
		{"out of order, then a bad delta", commitHex("", add(hid2, hk, "01"), ok, "00"), protocol.InvalidDelta},
		{"duplicate, then a bad tag", commitHex("43010203", ok, ok), protocol.DuplicateSlot},
		{"bad delta, then a bad tag", commitHex("43010203", "00"), protocol.InvalidDelta},
		{"bad structure, then bad bytes", "8300" + "62c328" + "1817", protocol.InvalidUTF8},
	}
	for _, c := range cases {
		b, err := hex.DecodeString(c.hex)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, err = Decode(b)
		pe, isErr := err.(*protocol.Error)
		if !isErr || pe.Reason != c.want {
			t.Errorf("%s (%s): %v, want %s", c.name, c.hex, err, c.want)
			continue
		}
		if pe.Offset < 0 || pe.Offset >= len(b) {
			t.Errorf("%s: offset %d outside the input", c.name, pe.Offset)
		}
	}
}

func TestDecodeAccepts(t *testing.T) {
	ok := add(hid1, hk, "01")
	for _, h := range []string{
		commitHex("4401020304", ok),
		commitHex("5820"+strings.Repeat("ab", 32), ok),
		commitHex("", ok, add(hid1, hkb, "01"), add(hid2, hk, "01")),
		commitHex("", add(hid1, "8201"+"4101", "f6"), add(hid1, "8201"+"4102", "f5"), add(hid1, "8201"+"420101", "f4")),
	} {
		b, _ := hex.DecodeString(h)
		c, err := Decode(b)
		if err != nil {
			t.Errorf("%s: %v", h, err)
			continue
		}
		if again, err := Encode(c); err != nil || !bytes.Equal(again, b) {
			t.Errorf("%s: re-encoded to %x (%v)", h, again, err)
		}
	}
}

func TestDecodeLimits(t *testing.T) {
	three := commitHex("", add(hid1, hk, "01"), add(hid1, hkb, "01"), add(hid2, hk, "01"))
	b, _ := hex.DecodeString(three)
	if _, err := DecodeWithLimits(b, Limits{MaxCommitBytes: len(b)}); err != nil {
		t.Fatalf("at the byte limit: %v", err)
	}
	if _, err := DecodeWithLimits(b, Limits{MaxCommitBytes: len(b) - 1}); protocol.ReasonOf(err) != protocol.CommitTooLarge {
		t.Fatalf("over the byte limit: %v", err)
	}
	if _, err := DecodeWithLimits(b, Limits{MaxDeltas: 3}); err != nil {
		t.Fatalf("at the delta limit: %v", err)
	}
	if _, err := DecodeWithLimits(b, Limits{MaxDeltas: 2}); protocol.ReasonOf(err) != protocol.TooManyDeltas {
		t.Fatalf("over the delta limit: %v", err)
	}
	// The zero value means the defaults.
	big := make([]byte, DefaultMaxCommitBytes+1)
	if _, err := Decode(big); protocol.ReasonOf(err) != protocol.CommitTooLarge {
		t.Fatalf("default byte limit: %v", err)
	}
	var many Commit
	for i := range DefaultMaxDeltas + 1 {
		many.Deltas = append(many.Deltas, Delta{Op: Remove, ID: ID{11: 1}, Ref: ObjectKey(fmt.Sprint(i))})
	}
	mb, err := Encode(many)
	if err != nil {
		t.Fatal(err)
	}
	// 65,537 deltas do not fit in a default-sized commit, so raise that.
	roomy := Limits{MaxCommitBytes: 4 << 20}
	if _, err := DecodeWithLimits(mb, roomy); protocol.ReasonOf(err) != protocol.TooManyDeltas {
		t.Fatalf("default delta limit: %v", err)
	}
	many.Deltas = many.Deltas[:DefaultMaxDeltas]
	mb, _ = Encode(many)
	if _, err := DecodeWithLimits(mb, roomy); err != nil {
		t.Fatalf("at the default delta limit: %v", err)
	}
}

// Decode allocates per commit, not per delta, while strings are short.
func TestDecodeAllocations(t *testing.T) {
	var c Commit
	for i := range 200 {
		c.Deltas = append(c.Deltas, Delta{Op: Add, ID: ID{11: byte(i % 3)}, Ref: ObjectKey(fmt.Sprintf("key%d", i)), Value: TextValue("v")})
	}
	b, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(50, func() {
		if _, err := Decode(b); err != nil {
			panic(err)
		}
	})
	if n > 2 {
		t.Fatalf("Decode of %d deltas made %v allocations, want at most 2", len(c.Deltas), n)
	}
}

// Small commits are cut from shared chunks: each decodes to what was
// encoded, is capped so appending copies, does not alias its input, and
// shares nothing another commit can write.
func TestDecodeSmallCommitsShareChunks(t *testing.T) {
	for k := 1; k <= smallDeltas+1; k++ {
		for _, size := range []int{0, 8, 30, 60, 100, 150, 230, 300, 600} {
			var c Commit
			for i := range k {
				c.Deltas = append(c.Deltas, Delta{Op: Add, ID: ID{11: byte(i)}, Ref: ObjectKey("k"), Value: TextValue(strings.Repeat("é", size/2/k))})
			}
			b, err := Encode(c)
			if err != nil {
				t.Fatal(err)
			}
			// Enough decodes to run past the end of a chunk of each kind.
			var got []Commit
			for range 2 * chunkDeltas {
				g, err := Decode(b)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, g)
			}
			for i := range b {
				b[i] = 0
			}
			for _, g := range got {
				if cap(g.Deltas) != k {
					t.Fatalf("%d deltas, %d bytes: cap %d", k, len(b), cap(g.Deltas))
				}
				_ = append(g.Deltas, Delta{Ref: ObjectKey("clobber")})
			}
			for i, g := range got {
				if !reflect.DeepEqual(g, c) {
					t.Fatalf("%d deltas, %d bytes, commit %d: decoded %+v", k, len(b), i, g)
				}
			}
			// Writing into one commit, even a string of its own, leaves the
			// others alone, through a collection.
			for i, g := range got {
				g.Deltas[0].Ref.Key = strings.Repeat("x", i)
				g.Deltas[k-1].Value = TextValue(fmt.Sprint("written", i))
			}
			runtime.GC()
			for i, g := range got {
				if g.Deltas[0].Ref.Key != strings.Repeat("x", i) || g.Deltas[k-1].Value.Str != fmt.Sprint("written", i) {
					t.Fatalf("%d deltas, %d bytes, commit %d: %+v", k, len(b), i, g.Deltas)
				}
				if k > 2 && g.Deltas[k-2].Value != c.Deltas[k-2].Value {
					t.Fatalf("%d deltas, %d bytes, commit %d: delta %d is %+v", k, len(b), i, k-2, g.Deltas[k-2].Value)
				}
			}
		}
	}
}

// A stream of small commits averages well under one allocation a commit.
func TestDecodeSmallCommitAllocations(t *testing.T) {
	// Under the race detector sync.Pool drops a quarter of what it is
	// given, and each drop costs a fresh chunk.
	bound := 0.1
	if raceOn {
		bound = 1
	}
	b, err := Encode(Commit{Deltas: []Delta{{Op: Add, ID: ID{11: 1}, Ref: ObjectKey("title"), Value: TextValue("hello")}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(1000, func() {
		if _, err := Decode(b); err != nil {
			panic(err)
		}
	}); n > bound {
		t.Errorf("%v allocations a commit, want at most %v", n, bound)
	}
}

// Commits decoded at once on many goroutines come out whole (run with -race).
func TestDecodeConcurrent(t *testing.T) {
	bs := make([][]byte, 50)
	want := make([]Commit, len(bs))
	for i := range bs {
		want[i] = Commit{Deltas: []Delta{
			{Op: Add, ID: ID{11: 1}, Ref: ObjectKey(fmt.Sprint("k", i)), Value: TextValue(strings.Repeat("v", i))},
			{Op: Replace, ID: ID{11: 2}, Ref: ArrayKey([]byte{byte(i + 1)}), Value: IntValue(int64(i))},
		}}
		var err error
		if bs[i], err = Encode(want[i]); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			for n := range 500 {
				i := (n + w*13) % len(bs)
				got, err := Decode(bs[i])
				if err == nil && !reflect.DeepEqual(got, want[i]) {
					err = fmt.Errorf("commit %d decoded as %+v", i, got)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// The decoded commit does not alias its input.
func TestDecodeCopies(t *testing.T) {
	h := commitHex("4401020304", add(hid1, hk, "4401020304"))
	b, _ := hex.DecodeString(h)
	c, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = 0
	}
	if c.Deltas[0].Ref.Key != "a" || c.Deltas[0].Value.Str != "\x01\x02\x03\x04" || !bytes.Equal(c.Tag, []byte{1, 2, 3, 4}) {
		t.Fatalf("decoded commit changed with its input: %+v", c)
	}
}

// A count of deltas the bytes cannot hold allocates what they can hold, not
// what the count says: 65,535 deltas stated in 65,539 bytes.
func TestDecodeHostileCount(t *testing.T) {
	b := append([]byte{0x81, 0x99, 0xff, 0xff}, make([]byte, 0xffff)...)
	if _, err := Decode(b); protocol.ReasonOf(err) != protocol.InvalidDelta {
		t.Fatalf("Decode: %v, want invalid-delta", err)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	const runs = 10
	for range runs {
		Decode(b)
	}
	runtime.ReadMemStats(&m1)
	held := len(b) / minDelta * int(unsafe.Sizeof(Delta{}))
	if got := int(m1.TotalAlloc-m0.TotalAlloc) / runs; got > held+len(b) {
		t.Fatalf("Decode allocated %d bytes, more than the %d deltas the input holds (%d bytes) and a copy of it", got, len(b)/minDelta, held)
	}
}

// Clone copies every delta, key, string and the tag into memory of its own.
func TestCommitClone(t *testing.T) {
	c := Commit{Deltas: []Delta{{Op: Add, ID: ID{11: 1}, Ref: ObjectKey("title"), Value: TextValue("hello")}}, Tag: []byte{1, 2, 3, 4}}
	b, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	cl := got.Clone()
	if !reflect.DeepEqual(cl, c) {
		t.Fatalf("clone %+v, want %+v", cl, c)
	}
	if &cl.Deltas[0] == &got.Deltas[0] || &cl.Tag[0] == &got.Tag[0] ||
		unsafe.StringData(cl.Deltas[0].Ref.Key) == unsafe.StringData(got.Deltas[0].Ref.Key) ||
		unsafe.StringData(cl.Deltas[0].Value.Str) == unsafe.StringData(got.Deltas[0].Value.Str) {
		t.Fatal("the clone shares memory with the decoded commit")
	}
	if z := (Commit{}).Clone(); z.Deltas != nil || z.Tag != nil {
		t.Fatalf("clone of the zero commit is %+v", z)
	}
}
