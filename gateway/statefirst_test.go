package gateway_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Issue 16: toward a topic whose peer asked for state, no commits go out
// before that state; the commits it covers are never sent, neither before
// nor after it; the ones after it follow with no gap and no duplicate. Both
// shapes (join by name with want; the aweft client's reconnect, open with
// the root then open with want) while a writer writes as fast as it can,
// and while the document is being created.
func TestStateComesBeforeCommits(t *testing.T) {
	eachTopology(t, gateway.Config{}, testStateComesBeforeCommits)
}

// On three nodes the writer is on the first and the joiners take turns:
// those on the first join while the document is created, the others once
// it has reached the log.
func testStateComesBeforeCommits(t *testing.T, tp topology) {
	const total = 3000
	for round := 0; round < 3; round++ {
		name := fmt.Sprintf("hot%d", round)
		w := dial(t, tp.url(0), peer.Options{})
		d, err := w.Share(ctxT(t), name, newDoc())
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // the writer, from the moment the document exists
			defer wg.Done()
			for i := 0; i < total; i++ {
				if _, err := set(d, keyOf(i), commit.IntValue(int64(i))); err != nil {
					t.Errorf("write %d: %v", i, err)
					return
				}
			}
		}()
		var root *frame.Root
		for j := 0; j < 8; j++ {
			if j == 1 {
				tp.stored(t, name)
			}
			r := dialRaw(t, tp.url(j))
			if j%2 == 0 || root == nil {
				r.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: name, Want: true})
			} else { // the reconnect shape, both opens before any answer
				r.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: name, Root: root})
				r.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: name, Root: root, Want: true})
			}
			f := r.next()
			if f.Kind != frame.Open || f.Name != name {
				t.Fatalf("round %d joiner %d: got %v (%s %s), want open", round, j, f.Kind, f.Reason, f.Message)
			}
			root = f.Root
			checkStateThenCommits(t, r, f.Topic, total, fmt.Sprintf("round %d joiner %d", round, j))
		}
		wg.Wait()
	}
}

func keyOf(i int) string { return fmt.Sprintf("k%06d", i) }

// checkStateThenCommits reads topic's frames until every key up to total
// has been seen, failing on commits before the state, on a key seen twice
// (in the state and a commit, or in two commits) and on a gap.
func checkStateThenCommits(t *testing.T, r *rawPeer, topic uint64, total int, who string) {
	t.Helper()
	f := r.next()
	if f.Kind != frame.State || f.Topic != topic {
		t.Fatalf("%s: first frame after open is %v (topic %d, %d commits), want state on %d", who, f.Kind, f.Topic, len(f.Commits), topic)
	}
	next := 0
	if f.State != nil {
		st, err := commit.Decode(f.State)
		if err != nil {
			t.Fatalf("%s: state: %v", who, err)
		}
		seen := map[int]bool{}
		for _, dl := range st.Deltas {
			if i, ok := keyIndex(dl.Ref); ok {
				seen[i] = true
			}
		}
		for seen[next] {
			next++
		}
		if len(seen) != next {
			t.Fatalf("%s: the state holds %d keys with a gap at %d", who, len(seen), next)
		}
	}
	for next < total {
		f := r.next()
		if f.Kind != frame.Commits || f.Topic != topic {
			t.Fatalf("%s: got %v on topic %d at key %d, want commits on %d", who, f.Kind, f.Topic, next, topic)
		}
		for _, b := range f.Commits {
			c, err := commit.Decode(b)
			if err != nil {
				t.Fatalf("%s: commit: %v", who, err)
			}
			for _, dl := range c.Deltas {
				i, ok := keyIndex(dl.Ref)
				if !ok {
					continue
				}
				if i != next {
					t.Fatalf("%s: commit for key %d where %d was due (a duplicate or a gap)", who, i, next)
				}
				next++
			}
		}
	}
}

func keyIndex(r commit.Ref) (int, bool) {
	if r.Kind != commit.Object || !strings.HasPrefix(r.Key, "k") {
		return 0, false
	}
	i, err := strconv.Atoi(r.Key[1:])
	return i, err == nil
}
