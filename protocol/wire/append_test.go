package wire

import (
	"encoding/hex"
	"math"
	"testing"
)

func TestAppendShortestHeads(t *testing.T) {
	cases := []struct {
		got  []byte
		want string
	}{
		{AppendUint(nil, 0), "00"},
		{AppendUint(nil, 23), "17"},
		{AppendUint(nil, 24), "1818"},
		{AppendUint(nil, 255), "18ff"},
		{AppendUint(nil, 256), "190100"},
		{AppendUint(nil, 65535), "19ffff"},
		{AppendUint(nil, 65536), "1a00010000"},
		{AppendUint(nil, 1<<32-1), "1affffffff"},
		{AppendUint(nil, 1<<32), "1b0000000100000000"},
		{AppendUint(nil, MaxInt), "1b0020000000000000"},
		{AppendInt(nil, -1), "20"},
		{AppendInt(nil, -24), "37"},
		{AppendInt(nil, -25), "3818"},
		{AppendInt(nil, -256), "38ff"},
		{AppendInt(nil, -257), "390100"},
		{AppendInt(nil, MinInt), "3b001fffffffffffff"},
		{AppendInt(nil, math.MinInt64), "3b7fffffffffffffff"},
		{AppendFloat(nil, 0.5), "fb3fe0000000000000"},
		{AppendFloat(nil, 3), "03"},
		{AppendFloat(nil, -3), "22"},
		{AppendFloat(nil, math.Copysign(0, -1)), "00"},
		{AppendFloat(nil, MaxInt), "1b0020000000000000"},
		{AppendFloat(nil, MinInt), "3b001fffffffffffff"},
		{AppendFloat(nil, MaxInt+2), "fb4340000000000001"},
		{AppendFloat(nil, 1<<55), "fb4360000000000000"},
		{AppendFloat(nil, 1e-7), "fb3e7ad7f29abcaf48"},
		{AppendBytes(nil, nil), "40"},
		{AppendBytes(nil, []byte{1, 2}), "420102"},
		{AppendBytes(nil, make([]byte, 24))[:2], "5818"},
		{AppendBytes(nil, make([]byte, 256))[:3], "590100"},
		{AppendByteString(nil, "\x01\x02"), "420102"},
		{AppendText(nil, ""), "60"},
		{AppendText(nil, "é"), "62c3a9"},
		{AppendArray(nil, 0), "80"},
		{AppendArray(nil, 23), "97"},
		{AppendArray(nil, 24), "9818"},
		{AppendArray(nil, 65536), "9a00010000"},
		{AppendBool(nil, false), "f4"},
		{AppendBool(nil, true), "f5"},
		{AppendNull(nil), "f6"},
	}
	for _, c := range cases {
		if got := hex.EncodeToString(c.got); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}

func TestAppendExtendsItsArgument(t *testing.T) {
	b := AppendArray([]byte{0xaa}, 2)
	b = AppendText(b, "k")
	b = AppendNull(b)
	if got := hex.EncodeToString(b); got != "aa82616bf6" {
		t.Fatalf("got %s", got)
	}
	if err := Scan(b[1:]); err != nil {
		t.Fatal(err)
	}
}

func TestValidIntAndFloat(t *testing.T) {
	if !ValidInt(MaxInt) || !ValidInt(MinInt) || ValidInt(MaxInt+1) || ValidInt(MinInt-1) {
		t.Fatal("ValidInt edges")
	}
	if ValidFloat(math.NaN()) || ValidFloat(math.Inf(1)) || ValidFloat(math.Inf(-1)) || !ValidFloat(math.MaxFloat64) {
		t.Fatal("ValidFloat")
	}
}

// Whatever the Append functions write for values the format carries, Scan
// accepts.
func TestAppendWritesWhatScanAccepts(t *testing.T) {
	floats := []float64{0, 1, -1, 0.5, -0.5, MaxInt, MinInt, MaxInt + 2, MinInt - 2, 1 << 60, -1e300, math.SmallestNonzeroFloat64, math.MaxFloat64, math.Copysign(0, -1)}
	for _, f := range floats {
		if err := Scan(AppendFloat(nil, f)); err != nil {
			t.Errorf("AppendFloat(%v): %v", f, err)
		}
	}
	ints := []int64{0, 23, 24, -24, -25, 1 << 32, -(1 << 32), MaxInt, MinInt}
	for _, i := range ints {
		if err := Scan(AppendInt(nil, i)); err != nil {
			t.Errorf("AppendInt(%v): %v", i, err)
		}
	}
}
