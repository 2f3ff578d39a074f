package wire

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

// reencode walks one item with a Reader and writes it again with the Append
// functions. For bytes Scan accepted the result must equal the input: that is
// what "one spelling per value" means.
func reencode(r *Reader, dst []byte) ([]byte, bool) {
	switch r.Next() {
	case Uint:
		v, ok := r.Uint()
		return AppendUint(dst, v), ok
	case NegInt:
		v, ok := r.Int()
		return AppendInt(dst, v), ok
	case Bytes:
		v, ok := r.Bytes()
		return AppendBytes(dst, v), ok
	case Text:
		v, ok := r.Text()
		return AppendText(dst, v), ok
	case Array:
		n, ok := r.Array()
		if !ok {
			return dst, false
		}
		dst = AppendArray(dst, n)
		for range n {
			if dst, ok = reencode(r, dst); !ok {
				return dst, false
			}
		}
		return dst, true
	case False, True:
		v, ok := r.Bool()
		return AppendBool(dst, v), ok
	case Null:
		return AppendNull(dst), r.Null()
	case Float:
		v, ok := r.Float()
		return AppendFloat(dst, v), ok
	}
	return dst, false
}

// randValue builds a random value of the format as fxamacker would decode it
// into an interface{}, and its encoding.
func randValue(rng *rand.Rand, depth int, dst []byte) (any, []byte) {
	k := rng.IntN(9)
	if depth >= MaxDepth && k == 8 {
		k = 0
	}
	switch k {
	case 0:
		v := randUint(rng)
		return v, AppendUint(dst, v)
	case 1:
		v := -1 - int64(randUint(rng)%MaxInt)
		return v, AppendInt(dst, v)
	case 2:
		v := make([]byte, rng.IntN(300))
		for i := range v {
			v[i] = byte(rng.Uint32())
		}
		return v, AppendBytes(dst, v)
	case 3:
		runes := []rune{'a', 'é', '\u00ff', '\uE000', 0x1D552, 0x1F600, 0}
		s := ""
		for range rng.IntN(40) {
			s += string(runes[rng.IntN(len(runes))])
		}
		return s, AppendText(dst, s)
	case 4:
		return false, AppendBool(dst, false)
	case 5:
		return true, AppendBool(dst, true)
	case 6:
		return nil, AppendNull(dst)
	case 7:
		f := randFloat(rng)
		if wholeInRange(f) {
			i := int64(f)
			if i >= 0 {
				return uint64(i), AppendFloat(dst, f)
			}
			return i, AppendFloat(dst, f)
		}
		return f, AppendFloat(dst, f)
	}
	n := rng.IntN(5)
	if rng.IntN(20) == 0 {
		n = 24 + rng.IntN(300)
	}
	items := make([]any, n)
	dst = AppendArray(dst, n)
	for i := range items {
		items[i], dst = randValue(rng, depth+1, dst)
	}
	return items, dst
}

func randUint(rng *rand.Rand) uint64 {
	edges := []uint64{0, 23, 24, 255, 256, 65535, 65536, 1<<32 - 1, 1 << 32, MaxInt - 1, MaxInt}
	if rng.IntN(2) == 0 {
		return edges[rng.IntN(len(edges))]
	}
	return rng.Uint64N(MaxInt + 1)
}

func randFloat(rng *rand.Rand) float64 {
	edges := []float64{0.5, -0.5, 1e-7, 1e300, MaxInt + 2, -MaxInt - 2, 1 << 55, 3, math.Copysign(0, -1), MaxInt, MinInt}
	if rng.IntN(2) == 0 {
		return edges[rng.IntN(len(edges))]
	}
	return (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(40)-20))
}

// Random values: Append writes what Scan accepts, the Reader reads it back to
// the same bytes, and an independent decoder (fxamacker/cbor) sees the same
// value.
func TestRoundTripAndDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dm, err := cbor.DecOptions{IntDec: cbor.IntDecConvertNone, DefaultByteStringType: reflect.TypeOf([]byte(nil))}.DecMode()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		want, b := randValue(rng, 1, nil)
		if err := Scan(b); err != nil {
			t.Fatalf("#%d: Scan refused what Append wrote: %v (%x)", i, err, b)
		}
		r := NewReader(b)
		again, ok := reencode(&r, nil)
		if !ok || !r.Done() || !bytes.Equal(again, b) {
			t.Fatalf("#%d: re-encoding gave %x, want %x", i, again, b)
		}
		var got any
		if err := dm.Unmarshal(b, &got); err != nil {
			t.Fatalf("#%d: fxamacker refused %x: %v", i, b, err)
		}
		if !reflect.DeepEqual(normalise(got), normalise(want)) {
			t.Fatalf("#%d: fxamacker read %#v, want %#v", i, got, want)
		}
	}
}

// normalise makes empty byte strings and arrays compare equal whether nil or not.
func normalise(v any) any {
	switch x := v.(type) {
	case []byte:
		if len(x) == 0 {
			return []byte{}
		}
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = normalise(x[i])
		}
		return out
	}
	return v
}
