package link

import (
	"testing"

	"github.com/weftgate/weftgate/protocol/frame"
)

// The frame byte bound is only a bound if the link's arithmetic is the
// codec's: check it against frame.Encode across every head size.
func TestFrameBytesMatchEncode(t *testing.T) {
	nums := []uint64{1, 23, 24, 255, 256, 65535, 65536, 1<<32 - 1, 1 << 32, frame.MaxNumber}
	lens := []int{1, 23, 24, 255, 256, 65535, 65536}
	for _, topic := range nums {
		for _, first := range nums {
			for _, n := range lens {
				cs := [][]byte{make([]byte, n), make([]byte, 1)}
				f := frame.Frame{Kind: frame.Commits, Topic: topic, First: first, Commits: cs}
				b, err := frame.Encode(f)
				if err != nil {
					t.Fatal(err)
				}
				if got := commitsFrameBytes(f.Topic, f.First, 2, itemBytes(n)+itemBytes(1)); got != len(b) {
					t.Errorf("commits topic %d first %d len %d: %d bytes, encoded %d", topic, f.First, n, got, len(b))
				}
				s := frame.Frame{Kind: frame.State, Topic: topic, State: cs[0]}
				if b, _ = frame.Encode(s); stateFrameBytes(topic, s.State) != len(b) {
					t.Errorf("state topic %d len %d: %d bytes, encoded %d", topic, n, stateFrameBytes(topic, s.State), len(b))
				}
			}
		}
		s := frame.Frame{Kind: frame.State, Topic: topic}
		if b, _ := frame.Encode(s); stateFrameBytes(topic, nil) != len(b) {
			t.Errorf("empty state topic %d: %d bytes, encoded %d", topic, stateFrameBytes(topic, nil), len(b))
		}
	}
}
