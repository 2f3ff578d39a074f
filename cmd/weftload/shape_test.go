package main

import (
	"testing"
	"time"

	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// Every shape's commits apply, one after another, to a document, and carry
// a stamp the watcher reads back; insert keeps its array bounded.
func TestShapesApply(t *testing.T) {
	for _, shape := range []string{shapeField, shapeInsert, shapeLarge} {
		root := commit.NewID()
		doc := document.New(root, commit.Object, document.Limits{})
		w := newWriter(root, shape, 3, 100)
		now := time.Unix(1_700_000_000, 42)
		for i := range 3 * insertKeep {
			ds, err := w.next(now)
			if err != nil {
				t.Fatalf("%s %d: %v", shape, i, err)
			}
			c := commit.Commit{Deltas: ds}
			b, err := commit.Encode(c)
			if err != nil {
				t.Fatalf("%s %d: encode: %v", shape, i, err)
			}
			c, err = commit.Decode(b)
			if err != nil {
				t.Fatalf("%s %d: decode: %v", shape, i, err)
			}
			if _, err := doc.Apply(c); err != nil {
				t.Fatalf("%s %d: apply: %v", shape, i, err)
			}
			sent, j, seq, ok := readStamp(c)
			if !ok || sent != now.UnixNano() || j != 3 || seq != i {
				t.Fatalf("%s %d: stamp %d %d %d %v", shape, i, sent, j, seq, ok)
			}
		}
		if shape == shapeInsert && len(w.items) != insertKeep {
			t.Errorf("insert holds %d items, want %d", len(w.items), insertKeep)
		}
	}
	if _, err := newWriter(commit.NewID(), "nope", 0, 1).next(time.Now()); err == nil {
		t.Error("an unknown shape made a commit")
	}
}

func TestReadStampIgnoresOtherText(t *testing.T) {
	for _, s := range []string{"", "12", "abc/1/2 x", "12/x/1 y", "12/1/x y", "/1/2 x", "1 2/3/4", "12/1 x", "12/1/2", "12/-1/2 x", "12/1/-2 x"} {
		c := commit.Commit{Deltas: []commit.Delta{{Value: commit.TextValue(s)}}}
		if _, _, _, ok := readStamp(c); ok {
			t.Errorf("%q read as a stamp", s)
		}
	}
}
