package frame_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/frame"
	"github.com/weftgate/weftgate/protocol/wire"
)

// arr builds the bytes of an array of items: int, uint64, string (text),
// []byte, nil (null), bool, or a nested arr result wrapped as raw.
func arr(items ...any) raw {
	b := wire.AppendArray(nil, len(items))
	for _, it := range items {
		b = appendItem(b, it)
	}
	return b
}

type raw []byte

func appendItem(b []byte, it any) []byte {
	switch v := it.(type) {
	case nil:
		return wire.AppendNull(b)
	case int:
		return wire.AppendInt(b, int64(v))
	case uint64:
		return wire.AppendUint(b, v)
	case float64:
		return wire.AppendFloat(b, v)
	case string:
		return wire.AppendText(b, v)
	case []byte:
		return wire.AppendBytes(b, v)
	case bool:
		return wire.AppendBool(b, v)
	case raw:
		return append(b, v...)
	}
	panic("appendItem: unexpected type")
}

var id12 = []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
var aCommit = []byte{0x81, 0x81, 0x83, 0x02, 0x4c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x82, 0x00, 0x61, 0x6b}

func TestDecodeRefusesNonFrames(t *testing.T) {
	cases := []struct {
		name  string
		b     []byte
		topic uint64 // the topic the error must expose
	}{
		{"kind not a number", arr("open", 1), 0},
		{"negative kind", arr(-1, 1), 0},
		{"kind 6", arr(6, 1), 0},
		{"leave without topic", arr(4), 0},
		{"leave with extra element", arr(4, 3, 0), 3},
		{"open short", arr(0, 2, "b", id12, 0), 2},
		{"state long", arr(1, 2, nil, nil), 2},
		{"fault short", arr(5, 1, "no-topic"), 0},
		{"negative topic", arr(4, -1), 0},
		{"topic zero in leave", arr(4, 0), 0},
		{"topic zero in open", arr(0, 0, "b", nil, nil, true), 0},
		{"topic zero in state", arr(1, 0, nil), 0},
		{"topic zero in commits", arr(2, 0, 1, arr(aCommit)), 0},
		{"topic zero in refused", arr(3, 0, 1, arr(arr("a", "b", nil))), 0},
		{"float topic", arr(4, 1.5), 0},
		{"name not text", arr(0, 1, id12, id12, 0, false), 1},
		{"root id 11 bytes", arr(0, 1, "b", id12[:11], 0, false), 1},
		{"root id 13 bytes", arr(0, 1, "b", append(id12[:12:12], 0), 0, false), 1},
		{"root id empty", arr(0, 1, "b", []byte{}, 0, false), 1},
		{"root id text", arr(0, 1, "b", "0102030405060708090a0b0c", 0, false), 1},
		{"root kind 3", arr(0, 1, "b", id12, 3, false), 1},
		{"root kind negative", arr(0, 1, "b", id12, -1, false), 1},
		{"root kind text", arr(0, 1, "b", id12, "map", false), 1},
		{"kind without id", arr(0, 1, "b", nil, 1, true), 1},
		{"id without kind", arr(0, 1, "b", id12, nil, true), 1},
		{"want null", arr(0, 1, "b", id12, 0, nil), 1},
		{"want number", arr(0, 1, "b", id12, 0, 1), 1},
		{"nothing without want", arr(0, 1, "b", nil, nil, false), 1},
		{"state text", arr(1, 2, "commit"), 2},
		{"state empty bytes", arr(1, 2, []byte{}), 2},
		{"state false", arr(1, 2, false), 2},
		{"first zero", arr(2, 1, 0, arr(aCommit)), 1},
		{"first text", arr(2, 1, "1", arr(aCommit)), 1},
		{"commits not a list", arr(2, 1, 1, aCommit), 1},
		{"commits empty", arr(2, 1, 1, arr()), 1},
		{"commit empty bytes", arr(2, 1, 1, arr(aCommit, []byte{})), 1},
		{"commit null", arr(2, 1, 1, arr(nil)), 1},
		{"commit nested array", arr(2, 1, 1, arr(arr(aCommit))), 1},
		{"seq zero", arr(3, 1, 0, arr(arr("a", "b", nil))), 1},
		{"seq negative", arr(3, 1, -4, arr(arr("a", "b", nil))), 1},
		{"reasons not a list", arr(3, 1, 1, "a"), 1},
		{"reasons empty", arr(3, 1, 1, arr()), 1},
		{"reason not an array", arr(3, 1, 1, arr("a")), 1},
		{"reason with 4 elements", arr(3, 1, 1, arr(arr("a", "b", nil, nil))), 1},
		{"reason with 2 elements", arr(3, 1, 1, arr(arr("a", "b"))), 1},
		{"reason code not text", arr(3, 1, 1, arr(arr(1, "b", nil))), 1},
		{"reason message not text", arr(3, 1, 1, arr(arr("a", nil, nil))), 1},
		{"path text", arr(3, 1, 1, arr(arr("a", "b", "users/x"))), 1},
		{"path step bytes", arr(3, 1, 1, arr(arr("a", "b", arr("users", []byte("x"))))), 1},
		{"second reason bad", arr(3, 9, 2, arr(arr("a", "b", nil), arr("a", "b", arr(1)))), 9},
		{"fault reason not text", arr(5, 3, 1, "m"), 0},
		{"fault message null", arr(5, 0, "bad-frame", nil), 0},
		{"fault topic text", arr(5, "0", "bad-frame", "m"), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := wire.Scan(c.b); err != nil {
				t.Fatalf("test bytes %x are not a value: %v", c.b, err)
			}
			f, err := frame.Decode(c.b)
			if err == nil {
				t.Fatalf("Decode(%x) = %+v, want bad-frame", c.b, f)
			}
			if r := protocol.ReasonOf(err); r != protocol.BadFrame {
				t.Fatalf("reason %q (%v), want bad-frame", r, err)
			}
			var bad *frame.BadFrameError
			if !errors.As(err, &bad) {
				t.Fatalf("%v is not a *BadFrameError", err)
			}
			if bad.Topic != c.topic {
				t.Errorf("Topic = %d, want %d (%v)", bad.Topic, c.topic, err)
			}
			var pe *protocol.Error
			if !errors.As(err, &pe) || pe.Reason != protocol.BadFrame || pe.Message != bad.Message {
				t.Errorf("unwrapped %+v does not carry the bad-frame message %q", pe, bad.Message)
			}
			if bad.Offset < 0 || bad.Offset >= len(c.b) {
				t.Errorf("Offset %d is outside the %d bytes", bad.Offset, len(c.b))
			}
		})
	}
}

func TestDecodeNamesKindOfAddressableFault(t *testing.T) {
	_, err := frame.Decode(arr(2, 7, 1, arr()))
	var bad *frame.BadFrameError
	if !errors.As(err, &bad) || bad.Topic != 7 || bad.Kind != frame.Commits {
		t.Fatalf("got %#v, want topic 7 of a commits frame", err)
	}
	if bad.Offset != 4 { // 84 02 07 01 | 80
		t.Errorf("Offset = %d, want 4, the empty list", bad.Offset)
	}
}

// Bytes that are not one value pass the wire's own reason through.
func TestDecodePassesByteReasons(t *testing.T) {
	good := arr(4, 7)
	cases := []struct {
		name string
		b    []byte
		want protocol.Reason
	}{
		{"no bytes", nil, protocol.Truncated},
		{"truncated", good[:len(good)-1], protocol.Truncated},
		{"trailing", append(arr(4, 7), 0), protocol.TrailingBytes},
		{"map", []byte{0xa0}, protocol.UnsupportedMajor},
		{"padded topic", []byte{0x82, 0x04, 0x18, 0x07}, protocol.NonCanonicalInteger},
		{"indefinite", []byte{0x9f, 0x04, 0x07, 0xff}, protocol.IndefiniteLength},
		{"bad utf8 name", arr(0, 1, raw{0x62, 0xc3, 0x28}, nil, nil, true), protocol.InvalidUTF8},
		{"topic above 2^53", arr(4, raw{0x1b, 0, 0x20, 0, 0, 0, 0, 0, 1}), protocol.IntegerOutOfRange},
		{"half float", arr(4, raw{0xf9, 0x3c, 0}), protocol.UnsupportedSimple},
		{"too deep", arr(3, 1, 1, arr(arr("a", "b", arr(arr(arr(arr(arr(arr())))))))), protocol.NestingTooDeep},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := frame.Decode(c.b)
			if r := protocol.ReasonOf(err); r != c.want {
				t.Fatalf("reason %q (%v), want %q", r, err, c.want)
			}
			var bad *frame.BadFrameError
			if errors.As(err, &bad) {
				t.Fatalf("%v is a BadFrameError; bytes that are not a value are not a frame fault", err)
			}
		})
	}
}

func TestDecodeKeepsEmptyPathApartFromNone(t *testing.T) {
	b := arr(3, 1, 2, arr(arr("a", "b", arr()), arr("c", "", nil)))
	f, err := frame.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []frame.Reason{{Code: "a", Message: "b", Path: []string{}}, {Code: "c"}}
	if !reflect.DeepEqual(f.Reasons, want) {
		t.Fatalf("Reasons = %#v, want %#v", f.Reasons, want)
	}
	again, err := frame.Encode(f)
	if err != nil || !bytes.Equal(again, b) {
		t.Fatalf("re-encoded %x, %v; want %x", again, err, b)
	}
}

func TestDecodeAliasesCommitBytes(t *testing.T) {
	b := arr(2, 1, 3, arr(aCommit))
	f, err := frame.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(f.Commits[0], aCommit) {
		t.Fatalf("commit = %x, want %x", f.Commits[0], aCommit)
	}
	b[len(b)-1] ^= 0xff
	if f.Commits[0][len(aCommit)-1] != b[len(b)-1] {
		t.Fatal("Commits do not alias the input, but Decode documents that they do")
	}
}

func TestDecodeFaultOnLink(t *testing.T) {
	f, err := frame.Decode(arr(5, 0, "bad-frame", ""))
	if err != nil {
		t.Fatal(err)
	}
	want := frame.Frame{Kind: frame.Fault, Reason: "bad-frame"}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("got %+v, want %+v", f, want)
	}
}
