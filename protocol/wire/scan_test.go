package wire

import (
	"encoding/hex"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weftgate/weftgate/protocol"
)

type scanCase struct {
	name   string
	hex    string
	reason protocol.Reason // "" means accepted
	offset int
}

func nest(n int, inner string) string { return strings.Repeat("81", n) + inner }

var scanCases = []scanCase{
	// Head widths at every boundary.
	{"uint 0", "00", "", 0},
	{"uint 23", "17", "", 0},
	{"uint 24", "1818", "", 0},
	{"uint 255", "18ff", "", 0},
	{"uint 256", "190100", "", 0},
	{"uint 65535", "19ffff", "", 0},
	{"uint 65536", "1a00010000", "", 0},
	{"uint 2^32-1", "1affffffff", "", 0},
	{"uint 2^32", "1b0000000100000000", "", 0},
	{"uint 23 in one byte", "1817", protocol.NonCanonicalInteger, 0},
	{"uint 0 in one byte", "1800", protocol.NonCanonicalInteger, 0},
	{"uint 255 in two bytes", "1900ff", protocol.NonCanonicalInteger, 0},
	{"uint 65535 in four bytes", "1a0000ffff", protocol.NonCanonicalInteger, 0},
	{"uint 2^32-1 in eight bytes", "1b00000000ffffffff", protocol.NonCanonicalInteger, 0},
	{"negint -24", "37", "", 0},
	{"negint -25", "3818", "", 0},
	{"negint padded", "3817", protocol.NonCanonicalInteger, 0},
	{"length padded", "5801ff", protocol.NonCanonicalInteger, 0},
	{"array length padded", "980100", protocol.NonCanonicalInteger, 0},
	{"padded head inside an array", "82001900ff", protocol.NonCanonicalInteger, 2},

	// The integer range.
	{"2^53", "1b0020000000000000", "", 0},
	{"2^53-1", "1b001fffffffffffff", "", 0},
	{"2^53+1", "1b0020000000000001", protocol.IntegerOutOfRange, 0},
	{"2^64-1", "1bffffffffffffffff", protocol.IntegerOutOfRange, 0},
	{"-2^53", "3b001fffffffffffff", "", 0},
	{"-2^53-1", "3b0020000000000000", protocol.IntegerOutOfRange, 0},
	{"-2^64", "3bffffffffffffffff", protocol.IntegerOutOfRange, 0},
	// A value that only a uint64 holds exactly: the low half alone is 0.
	{"2^53+2^32", "1b0020000100000000", protocol.IntegerOutOfRange, 0},

	// Floats.
	{"0.5", "fb3fe0000000000000", "", 0},
	{"2^55", "fb4360000000000000", "", 0},
	{"2^53+2", "fb4340000000000001", "", 0},
	{"1e300", "fb7e37e43c8800759c", "", 0},
	{"-0.5", "fbbfe0000000000000", "", 0},
	{"3.0", "fb4008000000000000", protocol.NonCanonicalFloat, 0},
	{"0.0", "fb0000000000000000", protocol.NonCanonicalFloat, 0},
	{"-0.0", "fb8000000000000000", protocol.NonCanonicalFloat, 0},
	{"2^53 as float", "fb4340000000000000", protocol.NonCanonicalFloat, 0},
	{"-2^53 as float", "fbc340000000000000", protocol.NonCanonicalFloat, 0},
	{"+Inf", "fb7ff0000000000000", protocol.NonFiniteFloat, 0},
	{"-Inf", "fbfff0000000000000", protocol.NonFiniteFloat, 0},
	{"NaN", "fb7ff8000000000000", protocol.NonFiniteFloat, 0},
	{"NaN payload", "fb7ff0000000000001", protocol.NonFiniteFloat, 0},
	{"float cut short", "fb3fe00000", protocol.Truncated, 0},

	// Simple values.
	{"false", "f4", "", 0},
	{"true", "f5", "", 0},
	{"null", "f6", "", 0},
	{"undefined", "f7", protocol.UnsupportedSimple, 0},
	{"simple 0", "e0", protocol.UnsupportedSimple, 0},
	{"simple 32", "f820", protocol.UnsupportedSimple, 0},
	{"half float", "f93c00", protocol.UnsupportedSimple, 0},
	{"single float", "fa3f800000", protocol.UnsupportedSimple, 0},
	{"major 7 ai 28", "fc", protocol.UnsupportedSimple, 0},
	{"break", "ff", protocol.UnsupportedSimple, 0},

	// Majors outside the format.
	{"empty map", "a0", protocol.UnsupportedMajor, 0},
	{"indefinite map", "bf", protocol.UnsupportedMajor, 0},
	{"tag 0", "c000", protocol.UnsupportedMajor, 0},
	{"tag in an array", "8200c000", protocol.UnsupportedMajor, 2},

	// Reserved and indefinite heads.
	{"uint ai 28", "1c", protocol.MalformedHead, 0},
	{"negint ai 29", "3d", protocol.MalformedHead, 0},
	{"bytes ai 30", "5e", protocol.MalformedHead, 0},
	{"array ai 28", "9c", protocol.MalformedHead, 0},
	{"uint ai 31", "1f", protocol.IndefiniteLength, 0},
	{"indefinite bytes", "5f4100ff", protocol.IndefiniteLength, 0},
	{"indefinite text", "7f6161ff", protocol.IndefiniteLength, 0},
	{"indefinite array", "9f00ff", protocol.IndefiniteLength, 0},
	{"indefinite array inside", "819f00ff", protocol.IndefiniteLength, 1},

	// Truncation.
	{"empty input", "", protocol.Truncated, 0},
	{"head cut short", "18", protocol.Truncated, 0},
	{"two-byte head cut short", "1901", protocol.Truncated, 0},
	{"eight-byte head cut short", "1b00000001", protocol.Truncated, 0},
	{"bytes cut short", "4200", protocol.Truncated, 0},
	{"text cut short", "636162", protocol.Truncated, 0},
	{"array missing items", "820000", "", 0},
	{"array missing an item", "8200", protocol.Truncated, 0},
	{"array missing its last nested item", "8281008200", protocol.Truncated, 3},
	{"huge array", "9affffffff", protocol.Truncated, 0},
	{"huge bytes", "5bffffffffffffffff", protocol.Truncated, 0},
	{"nested array too long", "8182000000", protocol.TrailingBytes, 4},
	{"nested array count past the end", "81830000", protocol.Truncated, 1},

	// Trailing bytes.
	{"two values", "0000", protocol.TrailingBytes, 1},
	{"array then a byte", "8000", protocol.TrailingBytes, 1},
	{"array then bytes", "810000", protocol.TrailingBytes, 2},

	// Text.
	{"empty text", "60", "", 0},
	{"é", "62c3a9", "", 0},
	{"emoji", "64f09f9880", "", 0},
	{"U+E000", "63ee8080", "", 0},
	{"c3 28", "62c328", protocol.InvalidUTF8, 0},
	{"lone surrogate", "63eda080", protocol.InvalidUTF8, 0},
	{"overlong nul", "62c080", protocol.InvalidUTF8, 0},
	{"ff in text", "61ff", protocol.InvalidUTF8, 0},
	{"past U+10FFFF", "64f4908080", protocol.InvalidUTF8, 0},
	{"bytes are not text", "42c328", "", 0},
	{"bad text in an array", "8200" + "62c328", protocol.InvalidUTF8, 2},

	// Nesting: the ninth array is refused, a scalar in the eighth is not.
	{"eight arrays", nest(8, "00"), "", 0},
	{"eight arrays, innermost empty", nest(7, "80"), "", 0},
	{"nine arrays", nest(9, "00"), protocol.NestingTooDeep, 8},
	{"nine arrays, innermost empty", nest(8, "80"), protocol.NestingTooDeep, 8},
	{"ninth array with a bad head", nest(8, "9c"), protocol.NestingTooDeep, 8},
	{"ten arrays", nest(10, "00"), protocol.NestingTooDeep, 8},
	{"deep but sequential", "83" + nest(7, "00") + nest(7, "00") + nest(6, "80"), "", 0},

	// A whole commit from the corpus (fixture 001's first delta, shortened).
	{"commit shape", "818184004c0000000000000000000000018200656669656c6401", "", 0},
}

func TestScan(t *testing.T) {
	for _, c := range scanCases {
		t.Run(c.name, func(t *testing.T) {
			b, err := hex.DecodeString(c.hex)
			if err != nil {
				t.Fatal(err)
			}
			err = Scan(b)
			if c.reason == "" {
				if err != nil {
					t.Fatalf("Scan(%s) = %v, want accepted", c.hex, err)
				}
				return
			}
			e, ok := err.(*protocol.Error)
			if !ok {
				t.Fatalf("Scan(%s) = %v, want *protocol.Error %s", c.hex, err, c.reason)
			}
			if e.Reason != c.reason || e.Offset != c.offset {
				t.Fatalf("Scan(%s) = %s at %d (%q), want %s at %d", c.hex, e.Reason, e.Offset, e.Message, c.reason, c.offset)
			}
			if e.Message == "" {
				t.Fatalf("Scan(%s): refusal has no message", c.hex)
			}
		})
	}
}

// Every decode-stage reason Scan owns must appear in the table above.
func TestScanCoversEveryByteReason(t *testing.T) {
	want := []protocol.Reason{
		protocol.MalformedHead, protocol.IndefiniteLength, protocol.NonCanonicalInteger,
		protocol.Truncated, protocol.TrailingBytes, protocol.NestingTooDeep,
		protocol.IntegerOutOfRange, protocol.NonCanonicalFloat, protocol.NonFiniteFloat,
		protocol.InvalidUTF8, protocol.UnsupportedMajor, protocol.UnsupportedSimple,
	}
	seen := map[protocol.Reason]bool{}
	for _, c := range scanCases {
		seen[c.reason] = true
	}
	for _, r := range want {
		if !seen[r] {
			t.Errorf("no case refuses with %s", r)
		}
	}
}

func TestScanDoesNotAllocate(t *testing.T) {
	var all [][]byte
	for _, c := range scanCases {
		if c.reason == "" {
			b, _ := hex.DecodeString(c.hex)
			all = append(all, b)
		}
	}
	n := testing.AllocsPerRun(100, func() {
		for _, b := range all {
			if Scan(b) != nil {
				panic("refused")
			}
		}
	})
	if n != 0 {
		t.Fatalf("Scan allocated %v times per run on accepted input", n)
	}
}

// ValidText against utf8.Valid on every string of up to three bytes, and on
// every string of up to five bytes drawn from the bytes at the edges of
// UTF-8's ranges.
func TestValidTextExhaustive(t *testing.T) {
	check := func(p []byte) {
		if got, want := ValidText(p), utf8.Valid(p); got != want {
			t.Fatalf("ValidText(%x) = %v, utf8.Valid says %v", p, got, want)
		}
	}
	for n := 0; n < 1<<24; n++ {
		check([]byte{byte(n >> 16), byte(n >> 8), byte(n)})
		if n < 1<<16 {
			check([]byte{byte(n >> 8), byte(n)})
		}
		if n < 1<<8 {
			check([]byte{byte(n)})
		}
	}
	edges := []byte{0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf,
		0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff}
	var grow func(p []byte)
	grow = func(p []byte) {
		check(p)
		if len(p) < 5 {
			for _, c := range edges {
				grow(append(p, c))
			}
		}
	}
	grow(nil)
}
