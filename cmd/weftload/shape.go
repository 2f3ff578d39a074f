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
// value "<unix nanos>/<writer> <padding>": watchers read the time for
// latency and the writer for flow control.
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

func stamp(now time.Time, j int, pad string) commit.Value {
	return commit.TextValue(strconv.FormatInt(now.UnixNano(), 10) + "/" + strconv.Itoa(j) + " " + pad)
}

// next is the writer's next commit, stamped now.
func (w *writerState) next(now time.Time) ([]commit.Delta, error) {
	defer func() { w.n++ }()
	v := stamp(now, w.j, w.pad)
	key := commit.ObjectKey("w" + strconv.Itoa(w.j))
	switch w.shape {
	case shapeField, shapeLarge:
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

// readStamp finds the stamp in a commit: when it was made and by which
// writer of its document.
func readStamp(c commit.Commit) (sent int64, writer int, ok bool) {
	for _, d := range c.Deltas {
		if d.Value.Type != commit.Text {
			continue
		}
		s := d.Value.Str
		slash := strings.IndexByte(s, '/')
		space := strings.IndexByte(s, ' ')
		if slash <= 0 || space <= slash {
			continue
		}
		t, err1 := strconv.ParseInt(s[:slash], 10, 64)
		j, err2 := strconv.Atoi(s[slash+1 : space])
		if err1 == nil && err2 == nil {
			return t, j, true
		}
	}
	return 0, 0, false
}
