package link

import (
	"testing"
	"unsafe"

	"github.com/weftgate/weftgate/protocol/frame"
)

// Frames handed back are reused for the next ones, holding none of the
// commits they carried, and a list past the bound is not kept.
func TestRecycledFramesAreReused(t *testing.T) {
	l := New(Config{ForgetSent: true})
	topic, err := l.Share("doc", &frame.Root{ID: [12]byte{1}}, false)
	if err != nil {
		t.Fatal(err)
	}
	l.Receive(frame.Frame{Kind: frame.Open, Topic: 1, Name: "doc", Root: &frame.Root{ID: [12]byte{1}}})
	l.Flush()
	send := func(bodies ...string) []frame.Frame {
		t.Helper()
		for _, b := range bodies {
			if _, err := l.Send(topic, []byte(b), nil); err != nil {
				t.Fatal(err)
			}
		}
		return l.Flush()
	}

	first := send("c1", "c2", "c3")
	carried := first[0].Commits
	l.Recycle(first)
	if first[0].Commits != nil || carried[0] != nil || carried[2] != nil {
		t.Fatalf("recycled frames still hold commits: %v, %q", first[0], carried)
	}
	second := send("c4", "c5")
	if unsafe.SliceData(second) != unsafe.SliceData(first) || unsafe.SliceData(second[0].Commits) != unsafe.SliceData(carried) {
		t.Fatal("the next frames were not made in the recycled memory")
	}
	if f := second[0]; len(second) != 1 || f.Kind != frame.Commits || f.First != 4 || len(f.Commits) != 2 || string(f.Commits[0]) != "c4" || string(f.Commits[1]) != "c5" {
		t.Fatalf("after recycling: %+v", second)
	}

	// A burst's long list is let go.
	l.Recycle(second)
	var burst []string
	for range maxSpareCommits + 1 {
		burst = append(burst, "c")
	}
	long := send(burst...)
	l.Recycle(long)
	if len(l.spareCommits) != 0 {
		t.Fatalf("kept a list of %d commits", cap(long[0].Commits))
	}
}
