package wire

import (
	"bytes"
	"encoding/hex"
	"testing"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReaderWalk(t *testing.T) {
	// [1, -2, h'0102', "hi", false, true, null, 0.5, [[]], 2^53]
	b := AppendArray(nil, 10)
	b = AppendUint(b, 1)
	b = AppendInt(b, -2)
	b = AppendBytes(b, []byte{1, 2})
	b = AppendText(b, "hi")
	b = AppendBool(b, false)
	b = AppendBool(b, true)
	b = AppendNull(b)
	b = AppendFloat(b, 0.5)
	b = AppendArray(AppendArray(b, 1), 0)
	b = AppendUint(b, MaxInt)
	if err := Scan(b); err != nil {
		t.Fatal(err)
	}
	r := NewReader(b)
	if r.Next() != Array {
		t.Fatalf("Next = %v", r.Next())
	}
	if n, ok := r.Array(); !ok || n != 10 {
		t.Fatalf("Array = %d %v", n, ok)
	}
	if v, ok := r.Uint(); !ok || v != 1 {
		t.Fatalf("Uint = %d %v", v, ok)
	}
	if r.Next() != NegInt {
		t.Fatalf("Next = %v", r.Next())
	}
	if v, ok := r.Int(); !ok || v != -2 {
		t.Fatalf("Int = %d %v", v, ok)
	}
	if v, ok := r.Bytes(); !ok || !bytes.Equal(v, []byte{1, 2}) || cap(v) != 2 {
		t.Fatalf("Bytes = %x %v cap %d", v, ok, cap(v))
	}
	if r.Next() != Text {
		t.Fatalf("Next = %v", r.Next())
	}
	if v, ok := r.Text(); !ok || v != "hi" {
		t.Fatalf("Text = %q %v", v, ok)
	}
	if r.Next() != False {
		t.Fatalf("Next = %v", r.Next())
	}
	if v, ok := r.Bool(); !ok || v {
		t.Fatalf("Bool = %v %v", v, ok)
	}
	if r.Next() != True {
		t.Fatalf("Next = %v", r.Next())
	}
	if v, ok := r.Bool(); !ok || !v {
		t.Fatalf("Bool = %v %v", v, ok)
	}
	if r.Next() != Null || !r.Null() {
		t.Fatal("Null")
	}
	if r.Next() != Float {
		t.Fatalf("Next = %v", r.Next())
	}
	if v, ok := r.Float(); !ok || v != 0.5 {
		t.Fatalf("Float = %v %v", v, ok)
	}
	at := r.Offset()
	r.Skip()
	if r.Offset() != at+2 {
		t.Fatalf("Skip moved %d bytes, want 2", r.Offset()-at)
	}
	if v, ok := r.Int(); !ok || v != MaxInt {
		t.Fatalf("Int = %d %v", v, ok)
	}
	if !r.Done() || r.Next() != Invalid {
		t.Fatalf("not done at %d of %d", r.Offset(), len(b))
	}
}

// A method that does not match the next item returns ok=false and leaves the
// reader where it was.
func TestReaderMismatchDoesNotConsume(t *testing.T) {
	for _, h := range []string{"00", "20", "4101", "6161", "8100", "f4", "f5", "f6", "fb3fe0000000000000"} {
		b := mustHex(t, h)
		r := NewReader(b)
		typ := r.Next()
		tries := map[Type]func() bool{
			Array:  func() bool { _, ok := r.Array(); return ok },
			Uint:   func() bool { _, ok := r.Uint(); return ok },
			NegInt: func() bool { _, ok := r.Int(); return ok },
			Bytes:  func() bool { _, ok := r.Bytes(); return ok },
			Text:   func() bool { _, ok := r.Text(); return ok },
			False:  func() bool { _, ok := r.Bool(); return ok },
			Null:   func() bool { return r.Null() },
			Float:  func() bool { _, ok := r.Float(); return ok },
		}
		matches := func(k Type) bool {
			switch k {
			case NegInt:
				return typ == NegInt || typ == Uint // Int takes both
			case False:
				return typ == False || typ == True
			}
			return k == typ
		}
		for k, try := range tries {
			if matches(k) {
				continue
			}
			if try() {
				t.Errorf("%s: %v read a %v", h, k, typ)
			}
			if r.Offset() != 0 {
				t.Errorf("%s: failed %v consumed %d bytes", h, k, r.Offset())
			}
		}
	}
}

// Cut-short and foreign bytes never panic and never report ok.
func TestReaderOnBrokenInput(t *testing.T) {
	for _, h := range []string{"", "18", "1b0000", "4201", "62c3", "9affffffff", "fb3fe0", "a0", "c000", "1c", "5f"} {
		b := mustHex(t, h)
		r := NewReader(b)
		if _, ok := r.Array(); ok {
			t.Errorf("%s: Array ok", h)
		}
		if _, ok := r.Uint(); ok {
			t.Errorf("%s: Uint ok", h)
		}
		if _, ok := r.Int(); ok {
			t.Errorf("%s: Int ok", h)
		}
		if _, ok := r.Bytes(); ok {
			t.Errorf("%s: Bytes ok", h)
		}
		if _, ok := r.Text(); ok {
			t.Errorf("%s: Text ok", h)
		}
		if _, ok := r.Float(); ok {
			t.Errorf("%s: Float ok", h)
		}
		if r.Offset() != 0 {
			t.Errorf("%s: consumed %d", h, r.Offset())
		}
		r.Skip()
		if !r.Done() {
			t.Errorf("%s: Skip did not reach the end", h)
		}
	}
}

func TestReaderIntRange(t *testing.T) {
	// Outside int64: refused, not wrapped.
	for _, h := range []string{"1b8000000000000000", "3b8000000000000000"} {
		r := NewReader(mustHex(t, h))
		if v, ok := r.Int(); ok {
			t.Errorf("%s: Int = %d", h, v)
		}
	}
	r := NewReader(mustHex(t, "1b8000000000000000"))
	if v, ok := r.Uint(); !ok || v != 1<<63 {
		t.Errorf("Uint = %d %v", v, ok)
	}
}

func TestReaderSkipNested(t *testing.T) {
	b := mustHex(t, "83"+"82"+"4201026161"+"8180"+"fb3fe0000000000000"+"07")
	r := NewReader(b)
	r.Skip()
	if r.Offset() != len(b)-1 {
		t.Fatalf("Skip stopped at %d, want %d", r.Offset(), len(b)-1)
	}
	if v, ok := r.Uint(); !ok || v != 7 {
		t.Fatalf("after Skip: %d %v", v, ok)
	}
}
