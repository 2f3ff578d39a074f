package link

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/weftgate/weftgate/internal/spectest"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Receive refuses what frame.Decode refuses, for frames built in memory: a
// bad-frame fault on the frame's topic when it has a usable one, else on
// topic 0, which ends the link.
func TestReceiveMalformed(t *testing.T) {
	r := &frame.Root{ID: [12]byte{1}}
	cases := []struct {
		name  string
		f     frame.Frame
		topic uint64 // the fault's; 0 ends the link
	}{
		{"unknown kind", frame.Frame{Kind: 9, Topic: 3}, 0},
		{"topic 0", frame.Frame{Kind: frame.Leave}, 0},
		{"topic above 2^53", frame.Frame{Kind: frame.Leave, Topic: frame.MaxNumber + 1}, 0},
		{"name not UTF-8", frame.Frame{Kind: frame.Open, Topic: 3, Name: "\xff", Root: r}, 3},
		{"no root, no want", frame.Frame{Kind: frame.Open, Topic: 3, Name: "a"}, 3},
		{"root kind 9", frame.Frame{Kind: frame.Open, Topic: 3, Name: "a", Root: &frame.Root{Kind: 9}}, 3},
		{"empty state", frame.Frame{Kind: frame.State, Topic: 3, State: []byte{}}, 3},
		{"no commits", frame.Frame{Kind: frame.Commits, Topic: 3, First: 1}, 3},
		{"first 0", frame.Frame{Kind: frame.Commits, Topic: 3, Commits: [][]byte{{1}}}, 3},
		{"seq past 2^53", frame.Frame{Kind: frame.Commits, Topic: 3, First: frame.MaxNumber, Commits: [][]byte{{1}, {2}}}, 3},
		{"empty commit", frame.Frame{Kind: frame.Commits, Topic: 3, First: 1, Commits: [][]byte{{1}, {}}}, 3},
		{"no reasons", frame.Frame{Kind: frame.Refused, Topic: 3, Seq: 1}, 3},
		{"seq 0", frame.Frame{Kind: frame.Refused, Topic: 3, Reasons: []frame.Reason{{Code: "a"}}}, 3},
		{"reason not UTF-8", frame.Frame{Kind: frame.Refused, Topic: 3, Seq: 1, Reasons: []frame.Reason{{Code: "a", Path: []string{"\xff"}}}}, 3},
		{"fault not UTF-8", frame.Frame{Kind: frame.Fault, Topic: 3, Reason: "\xff"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := New(Config{})
			l.Receive(c.f)
			out := l.Flush()
			if len(out) != 1 || out[0].Kind != frame.Fault || out[0].Reason != string(protocol.BadFrame) || out[0].Topic != c.topic {
				t.Fatalf("sent %+v, want one bad-frame fault on topic %d", out, c.topic)
			}
			if l.Closed() != (c.topic == 0) {
				t.Fatalf("link ended %v, want %v", l.Closed(), c.topic == 0)
			}
			if _, err := frame.Encode(c.f); err == nil && c.name != "seq past 2^53" {
				t.Fatalf("frame.Encode takes a frame the link refuses")
			}
		})
	}
}

// The link's no-topic answer is the spec's fixture, byte for byte.
func TestNoTopicIsFixture(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(spectest.Dir(t), "frames", "008-fault-topic.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx struct{ Bytes string }
	if err := json.Unmarshal(data, &fx); err != nil {
		t.Fatal(err)
	}
	l := New(Config{})
	l.Receive(frame.Frame{Kind: frame.Commits, Topic: 6, First: 1, Commits: [][]byte{{1}}})
	out := l.Flush()
	if len(out) != 1 {
		t.Fatalf("sent %+v", out)
	}
	b, err := frame.Encode(out[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(b); got != fx.Bytes {
		t.Fatalf("no-topic fault is %s, the fixture %s", got, fx.Bytes)
	}
}
