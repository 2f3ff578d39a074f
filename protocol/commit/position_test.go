package commit

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weftgate/weftgate/protocol"
)

func TestValidPosition(t *testing.T) {
	for _, c := range []struct {
		p  string
		ok bool
	}{{"", false}, {"00", false}, {"4000", false}, {"01", true}, {"2001", true}, {"0001", true}, {"ff", true}} {
		if got := ValidPosition(unhex(t, c.p)); got != c.ok {
			t.Errorf("ValidPosition(%s) = %v", c.p, got)
		}
	}
}

func TestBetweenCases(t *testing.T) {
	cases := []struct{ a, b string }{
		{"", ""}, {"", "80"}, {"80", ""}, {"", "01"}, {"", "0001"}, {"ff", ""}, {"ffff", ""},
		{"20", "40"}, {"20", "21"}, {"20", "2001"}, {"2001", "21"}, {"80", "8080"}, {"80", "8001"},
		{"80", "800001"}, {"7fff", "80"}, {"01", "02"}, {"0101", "02"}, {"05", "050007"},
	}
	for _, c := range cases {
		a, b := unhex(t, c.a), unhex(t, c.b)
		got, err := Between(a, b)
		if err != nil {
			t.Fatalf("Between(%s, %s): %v", c.a, c.b, err)
		}
		checkBetween(t, a, b, got)
	}
	if got, _ := Between(nil, nil); hex.EncodeToString(got) != "80" {
		t.Errorf("first position %x, want 80", got)
	}
}

func checkBetween(t *testing.T, a, b, c []byte) {
	t.Helper()
	if !ValidPosition(c) {
		t.Fatalf("Between(%x, %x) = %x, not a position", a, b, c)
	}
	if len(a) > 0 && bytes.Compare(a, c) >= 0 || len(b) > 0 && bytes.Compare(c, b) >= 0 {
		t.Fatalf("Between(%x, %x) = %x, not between", a, b, c)
	}
}

func TestBetweenRefuses(t *testing.T) {
	for _, c := range []struct{ a, b string }{{"40", "20"}, {"20", "20"}, {"4000", ""}, {"", "4000"}, {"21", "2001"}} {
		_, err := Between(unhex(t, c.a), unhex(t, c.b))
		if protocol.ReasonOf(err) != protocol.InvalidPosition {
			t.Errorf("Between(%s, %s) = %v, want invalid-position", c.a, c.b, err)
		}
	}
}

// insertRun inserts n positions into an array, choosing the gap with pick,
// checks order and validity after every insert, and returns the longest
// position made.
func insertRun(t *testing.T, n int, pick func(size int) int) int {
	t.Helper()
	var arr [][]byte
	longest := 0
	for range n {
		i := pick(len(arr)) // insert before arr[i]; i == len means at the end
		var a, b []byte
		if i > 0 {
			a = arr[i-1]
		}
		if i < len(arr) {
			b = arr[i]
		}
		c, err := Between(a, b)
		if err != nil {
			t.Fatalf("Between(%x, %x): %v", a, b, err)
		}
		checkBetween(t, a, b, c)
		arr = slices.Insert(arr, i, c)
		longest = max(longest, len(c))
	}
	if !slices.IsSortedFunc(arr, bytes.Compare) {
		t.Fatal("array out of order")
	}
	return longest
}

// Random and patterned insert sequences keep order and validity, and
// positions stay short: the bound is what each pattern is designed to cost.
func TestBetweenSequences(t *testing.T) {
	const n = 5000
	rng := rand.New(rand.NewPCG(3, 4))
	patterns := []struct {
		name string
		pick func(size int) int
		max  int
	}{
		{"random", func(s int) int { return rng.IntN(s + 1) }, 16},
		{"append", func(s int) int { return s }, n/127 + 2},
		{"prepend", func(int) int { return 0 }, n/127 + 2},
		{"typing in the middle", typing(), n/127 + 3},
		{"typing backwards at one place", backwards(), n/127 + 3},
		{"always before the last insert", func(s int) int { return max(0, s-1) }, n/127 + 3},
	}
	for _, p := range patterns {
		t.Run(p.name, func(t *testing.T) {
			if got := insertRun(t, n, p.pick); got > p.max {
				t.Fatalf("%d inserts made a %d-byte position, want at most %d", n, got, p.max)
			} else {
				t.Logf("%d inserts: longest position %d bytes", n, got)
			}
		})
	}
}

// typing inserts after the previous insert, starting between two items.
func typing() func(int) int {
	next := -1
	return func(s int) int {
		if next < 0 || s < 2 {
			next = s / 2
			if s < 2 {
				next = s
			}
			return next
		}
		next++
		return next
	}
}

// backwards inserts before the previous insert, at a fixed index mid-array.
func backwards() func(int) int {
	at := -1
	return func(s int) int {
		if at < 0 && s >= 10 {
			at = s / 2
		}
		if at < 0 {
			return s
		}
		return at
	}
}

func FuzzBetween(f *testing.F) {
	f.Add([]byte{0x20}, []byte{0x40})
	f.Add([]byte{}, []byte{0x01})
	f.Add([]byte{0xff, 0xff}, []byte{})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		c, err := Between(a, b)
		valid := (len(a) == 0 || ValidPosition(a)) && (len(b) == 0 || ValidPosition(b)) &&
			(len(a) == 0 || len(b) == 0 || bytes.Compare(a, b) < 0)
		if valid != (err == nil) {
			t.Fatalf("Between(%x, %x) = %v, bounds valid %v", a, b, err, valid)
		}
		if err == nil {
			checkBetween(t, a, b, c)
			if len(c) > max(len(a), len(b))+1 {
				t.Fatalf("Between(%x, %x) = %x, longer than needed", a, b, c)
			}
		}
	})
}
