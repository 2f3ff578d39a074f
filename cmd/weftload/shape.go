package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weftgate/weftgate/protocol/commit"
)

// Shapes of the commits writers make.
const (
	shapeField  = "field"  // replace one text field
	shapeInsert = "insert" // insert into an array (and trim it)
	shapeLarge  = "large"  // replace one field with a large text
	// shapeFanout is a scenario, not a commit shape: one document, one
	// writer making field commits, -readers peers that each asked for
	// state. It lives on -shape because that is where the issue asked for
	// it and it fixes the run's shape as a whole; -docs, -writers and
	// -peers follow from it.
	shapeFanout = "fanout"
)

const (
	// insertKeep bounds a writer's array: past it each insert also removes
	// the oldest item, so replicas stay the same size however long the run.
	insertKeep = 64
	// defaultLargeSize is -size for the large shape when -size is left 0.
	defaultLargeSize = 64 << 10
	// defaultSize is -size for the other shapes when it is left 0.
	defaultSize = 16
)

// writerState makes one writer's commits. Every commit carries one text
// value "<unix nanos>/<writer>/<seq> <padding>": watchers read the time
// for latency, the writer for flow control, and the writer's sequence
// (from 0) to find commits missing or delivered twice.
type writerState struct {
	root  commit.ID
	shape string
	j     int    // the writer's number on its document
	pad   string // the padding
	n     int    // commits made

	arr   commit.ID // insert: the writer's array
	items [][]byte  // insert: positions held, oldest first
}

func newWriter(root commit.ID, shape string, j, size int) *writerState {
	return &writerState{root: root, shape: shape, j: j, pad: strings.Repeat("x", size), arr: commit.NewID()}
}

func stamp(now time.Time, j, seq int, pad string) commit.Value {
	return commit.TextValue(strconv.FormatInt(now.UnixNano(), 10) + "/" + strconv.Itoa(j) + "/" + strconv.Itoa(seq) + " " + pad)
}

// next is the writer's next commit, stamped now.
func (w *writerState) next(now time.Time) ([]commit.Delta, error) {
	defer func() { w.n++ }()
	v := stamp(now, w.j, w.n, w.pad)
	key := commit.ObjectKey("w" + strconv.Itoa(w.j))
	switch w.shape {
	case shapeField, shapeLarge, shapeFanout:
		op := commit.Replace
		if w.n == 0 {
			op = commit.Add
		}
		return []commit.Delta{{Op: op, ID: w.root, Ref: key, Value: v}}, nil
	case shapeInsert:
		var last []byte
		if len(w.items) > 0 {
			last = w.items[len(w.items)-1]
		}
		pos, err := commit.Between(last, nil)
		if err != nil {
			return nil, err
		}
		ds := []commit.Delta{{Op: commit.Add, ID: w.arr, Ref: commit.ArrayKey(pos), Value: v}}
		if w.n == 0 {
			ds = append(ds, commit.Delta{Op: commit.Add, ID: w.root, Ref: key,
				Value: commit.RefTo(commit.Reference{Edge: commit.Attach, Kind: commit.Array, ID: w.arr})})
		}
		if len(w.items) == insertKeep {
			ds = append(ds, commit.Delta{Op: commit.Remove, ID: w.arr, Ref: commit.ArrayKey(w.items[0])})
			w.items = w.items[1:]
		}
		w.items = append(w.items, pos)
		return ds, nil
	}
	return nil, fmt.Errorf("unknown shape %q", w.shape)
}

// readStamp finds the first stamp in a commit: when it was made, by which
// writer of its document, and that writer's sequence.
func readStamp(c commit.Commit) (sent int64, writer, seq int, ok bool) {
	for _, d := range c.Deltas {
		if sent, writer, seq, ok = parseStamp(d.Value); ok {
			return
		}
	}
	return 0, 0, 0, false
}

func parseStamp(v commit.Value) (sent int64, writer, seq int, ok bool) {
	if v.Type != commit.Text {
		return 0, 0, 0, false
	}
	head, _, found := strings.Cut(v.Str, " ")
	t, rest, ok1 := strings.Cut(head, "/")
	j, n, ok2 := strings.Cut(rest, "/")
	if !found || !ok1 || !ok2 {
		return 0, 0, 0, false
	}
	var err [3]error
	sent, err[0] = strconv.ParseInt(t, 10, 64)
	writer, err[1] = strconv.Atoi(j)
	seq, err[2] = strconv.Atoi(n)
	if err[0] != nil || err[1] != nil || err[2] != nil || writer < 0 || seq < 0 {
		return 0, 0, 0, false
	}
	return sent, writer, seq, true
}

// stateCovers is, per writer, the next sequence a state does not cover:
// one past the highest stamp it holds. Shapes keep each writer's newest
// stamp in the document, so that is the last commit folded into it.
func stateCovers(c commit.Commit, writers int) []int {
	next := make([]int, writers)
	for _, d := range c.Deltas {
		if _, j, n, ok := parseStamp(d.Value); ok && j < writers {
			next[j] = max(next[j], n+1)
		}
	}
	return next
}
