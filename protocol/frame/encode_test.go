package frame_test

import (
	"bytes"
	"testing"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

func TestEncodeRefusesWhatDecodeRefuses(t *testing.T) {
	root := &frame.Root{Kind: commit.Map}
	cases := []struct {
		name string
		f    frame.Frame
	}{
		{"unknown kind", frame.Frame{Kind: 6, Topic: 1}},
		{"topic zero", frame.Frame{Kind: frame.Leave}},
		{"topic above 2^53", frame.Frame{Kind: frame.Leave, Topic: frame.MaxNumber + 1}},
		{"fault topic above 2^53", frame.Frame{Kind: frame.Fault, Topic: frame.MaxNumber + 1}},
		{"nothing without want", frame.Frame{Kind: frame.Open, Topic: 1, Name: "b"}},
		{"root kind 3", frame.Frame{Kind: frame.Open, Topic: 1, Root: &frame.Root{Kind: 3}}},
		{"name not UTF-8", frame.Frame{Kind: frame.Open, Topic: 1, Name: "\xc3(", Root: root}},
		{"empty state bytes", frame.Frame{Kind: frame.State, Topic: 1, State: []byte{}}},
		{"first zero", frame.Frame{Kind: frame.Commits, Topic: 1, Commits: [][]byte{aCommit}}},
		{"first above 2^53", frame.Frame{Kind: frame.Commits, Topic: 1, First: frame.MaxNumber + 1, Commits: [][]byte{aCommit}}},
		{"no commits", frame.Frame{Kind: frame.Commits, Topic: 1, First: 1}},
		{"empty commit", frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{aCommit, nil}}},
		{"seq zero", frame.Frame{Kind: frame.Refused, Topic: 1, Reasons: []frame.Reason{{Code: "a"}}}},
		{"no reasons", frame.Frame{Kind: frame.Refused, Topic: 1, Seq: 1}},
		{"code not UTF-8", frame.Frame{Kind: frame.Refused, Topic: 1, Seq: 1, Reasons: []frame.Reason{{Code: "\xff"}}}},
		{"message not UTF-8", frame.Frame{Kind: frame.Refused, Topic: 1, Seq: 1, Reasons: []frame.Reason{{Message: "\xff"}}}},
		{"step not UTF-8", frame.Frame{Kind: frame.Refused, Topic: 1, Seq: 1, Reasons: []frame.Reason{{Path: []string{"ok", "\xed\xa0\x80"}}}}},
		{"fault reason not UTF-8", frame.Frame{Kind: frame.Fault, Reason: "\xff"}},
		{"fault message not UTF-8", frame.Frame{Kind: frame.Fault, Message: "\xff"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := frame.Encode(c.f)
			if err == nil {
				t.Fatalf("Encode(%+v) = %x, want an error", c.f, b)
			}
			if r := protocol.ReasonOf(err); r != protocol.BadFrame {
				t.Fatalf("reason %q (%v), want bad-frame", r, err)
			}
			dst := []byte{1, 2}
			out, err := frame.Append(dst, c.f)
			if err == nil || !bytes.Equal(out, []byte{1, 2}) {
				t.Fatalf("Append = %x, %v; want the input back and an error", out, err)
			}
		})
	}
}

// Every valid frame shape round-trips, including the edges of each range.
func TestEncodeRoundTrips(t *testing.T) {
	frames := []frame.Frame{
		{Kind: frame.Open, Topic: frame.MaxNumber, Name: "", Root: &frame.Root{ID: commit.ID{0xff}, Kind: commit.Array}},
		{Kind: frame.Open, Topic: 1, Name: "é/𝕒", Want: true},
		{Kind: frame.State, Topic: 24, State: aCommit},
		{Kind: frame.State, Topic: 256},
		{Kind: frame.Commits, Topic: 1, First: frame.MaxNumber, Commits: [][]byte{aCommit, aCommit, {0}}},
		{Kind: frame.Refused, Topic: 70000, Seq: 1 << 32, Reasons: []frame.Reason{{Code: "x", Path: []string{"", "a"}}}},
		{Kind: frame.Leave, Topic: 1},
		{Kind: frame.Fault, Topic: 0, Reason: "no-topic", Message: "m"},
	}
	for _, f := range frames {
		b, err := frame.Encode(f)
		if err != nil {
			t.Fatalf("Encode(%+v): %v", f, err)
		}
		got, err := frame.Decode(b)
		if err != nil {
			t.Fatalf("Decode(Encode(%+v)) = %v", f, err)
		}
		again, err := frame.Encode(got)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("%+v: re-encoded %x, %v; want %x", f, again, err, b)
		}
		if got.Kind != f.Kind || got.Topic != f.Topic {
			t.Fatalf("decoded %+v from %+v", got, f)
		}
	}
}

// Fields that do not belong to a kind are not written.
func TestEncodeIgnoresForeignFields(t *testing.T) {
	b, err := frame.Encode(frame.Frame{Kind: frame.Leave, Topic: 7, Name: "x", Seq: 3, Commits: [][]byte{nil}})
	if err != nil || !bytes.Equal(b, []byte{0x82, 0x04, 0x07}) {
		t.Fatalf("got %x, %v; want 820407", b, err)
	}
}
