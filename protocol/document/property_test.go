package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

// checkRound draws one commit for d and checks every property of applying it:
// a refusal changes nothing; an accepted commit keeps the invariants, gives
// the same document in any delta order and through Update, and its inverse
// restores every slot; the snapshot rebuilds to itself; reconciling e to
// d's snapshot makes them agree. It reports whether the commit was accepted.
func checkRound(t testing.TB, d, e *Document, s source) bool {
	t.Helper()
	c := genCommit(s, d, 0)
	before := d.Clone()
	beforeDump := dump(d)
	inv, err := d.Apply(c)
	if err != nil {
		if _, ok := err.(*Refusal); !ok || protocol.ReasonOf(err) == "" {
			t.Fatalf("refusal %T %v has no reason", err, err)
		}
		if dump(d) != beforeDump {
			t.Fatalf("refused commit %v changed the document", c.Deltas)
		}
		// The same refusal in another order, and from Update.
		other := before.Clone()
		err2 := other.Update(reversed(c))
		if err2 == nil || err2.Error() != err.Error() {
			t.Fatalf("reversed commit: %v, first %v", err2, err)
		}
	} else {
		checkInvariants(t, d)
		// Another order, through Update (no inverse): the same document.
		other := before.Clone()
		if err := other.Update(reversed(c)); err != nil {
			t.Fatalf("reversed commit refused: %v", err)
		}
		checkInvariants(t, other)
		if dump(other) != dump(d) {
			t.Fatalf("delta order or Update changed the result")
		}
		undo := d.Clone()
		if _, err := undo.Apply(inv); err != nil {
			t.Fatalf("inverse %v refused: %v", inv.Deltas, err)
		}
		checkInvariants(t, undo)
		if got, want := dumpOf(undo, before), dump(before); got != want {
			t.Fatalf("inverse did not restore:\ngot  %s\nwant %s", got, want)
		}
	}
	checkSnapshot(t, d)
	checkReconcile(t, e, d)
	return err == nil
}

func reversed(c commit.Commit) commit.Commit {
	ds := slices.Clone(c.Deltas)
	slices.Reverse(ds)
	return commit.Commit{Deltas: ds, Tag: c.Tag}
}

// dumpOf is d's dump over only the ids ref holds: the inverse leaves the
// observables a commit brought in, detached and empty, and nothing else.
func dumpOf(d, ref *Document) string {
	c := d.Clone()
	for x, o := range c.obs {
		if ref.obs[x] == nil {
			if o.len() != 0 || o.parent != nil {
				return fmt.Sprintf("%s left behind with slots or attached", x)
			}
			delete(c.obs, x)
		}
	}
	return dump(c)
}

// checkSnapshot: the snapshot is canonical, holds only adds, and a
// document rebuilt from it snapshots the same.
func checkSnapshot(t testing.TB, d *Document) {
	t.Helper()
	s := d.Snapshot()
	if !slices.IsSortedFunc(s.Deltas, func(a, b commit.Delta) int { return compareDelta(&a, &b) }) {
		t.Fatalf("snapshot not in canonical order")
	}
	for _, dl := range s.Deltas {
		if dl.Op != commit.Add || !d.Reachable(dl.ID) {
			t.Fatalf("snapshot delta %v", dl)
		}
	}
	r := New(d.root.id, d.root.kind, Limits{})
	if len(s.Deltas) > 0 {
		if _, err := r.Apply(s); err != nil {
			t.Fatalf("own snapshot refused: %v", err)
		}
	}
	checkInvariants(t, r)
	if !sameSnapshot(t, r.Snapshot(), s) {
		t.Fatalf("rebuilt snapshot differs")
	}
	b, err := d.SnapshotBytes()
	if err != nil || !bytes.Equal(b, encoded(t, s)) {
		t.Fatalf("SnapshotBytes: %v", err)
	}
	if b != nil {
		if back, err := commit.Decode(b); err != nil || !slices.EqualFunc(back.Deltas, s.Deltas, func(a, b commit.Delta) bool { return a == b }) {
			t.Fatalf("snapshot bytes decode to something else: %v", err)
		}
	}
	// The JSON view reads back to the same state.
	j, err := json.Marshal(d)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	back, err := ParseJSON(j, Limits{})
	if err != nil {
		t.Fatalf("parse own JSON: %v\n%s", err, j)
	}
	checkInvariants(t, back)
	if !sameSnapshot(t, back.Snapshot(), s) {
		t.Fatalf("JSON round trip changed the state")
	}
}

// sameSnapshot compares two snapshots as encoded bytes (an empty one is
// the state frame's null).
func sameSnapshot(t testing.TB, a, b commit.Commit) bool {
	t.Helper()
	return bytes.Equal(encoded(t, a), encoded(t, b))
}

func encoded(t testing.TB, c commit.Commit) []byte {
	t.Helper()
	if len(c.Deltas) == 0 {
		return nil
	}
	b, err := commit.Encode(c)
	if err != nil {
		t.Fatalf("snapshot does not encode: %v", err)
	}
	return b
}

// checkReconcile moves e to d's state and checks that they agree, that the
// commit it reports is an ordinary commit doing the same, and that doing
// it again changes nothing.
func checkReconcile(t testing.TB, e, d *Document) {
	t.Helper()
	was := e.Clone()
	c, err := e.Reconcile(d.Snapshot())
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	checkInvariants(t, e)
	if !sameSnapshot(t, e.Snapshot(), d.Snapshot()) {
		t.Fatalf("reconciled snapshot differs:\n%v\n%v", e.Snapshot().Deltas, d.Snapshot().Deltas)
	}
	if len(c.Deltas) > 0 && !hasCut(was, c) {
		if _, err := was.Apply(c); err != nil {
			t.Fatalf("reconcile's commit refused as a commit: %v", err)
		}
		if !sameSnapshot(t, was.Snapshot(), e.Snapshot()) {
			t.Fatalf("reconcile's commit does something else")
		}
	}
	if again, err := e.Reconcile(d.Snapshot()); err != nil || len(again.Deltas) != 0 {
		t.Fatalf("second reconcile: %v %v", again.Deltas, err)
	}
}

// hasCut reports whether reconciling was to cut a stale edge in a
// detached observable, which no commit can do.
func hasCut(was *Document, c commit.Commit) bool {
	for _, dl := range c.Deltas {
		if dl.Op != commit.Remove && isAttach(dl.Value) {
			ch := was.obs[dl.Value.Ref.ID]
			if ch != nil && ch.parent != nil && !was.reachable(ch.parent) {
				if _, ok := findDelta(c, ch.parent.id, ch.parentKey); !ok {
					return true
				}
			}
		}
	}
	return false
}

func findDelta(c commit.Commit, x commit.ID, key string) (commit.Delta, bool) {
	for _, dl := range c.Deltas {
		if dl.ID == x && dl.Ref.Key == key {
			return dl, true
		}
	}
	return commit.Delta{}, false
}

// driftBase is the id pool of the second document's own commits.
const driftBase = 100

func TestProperties(t *testing.T) {
	rounds := 1500
	if testing.Short() || raceOn {
		rounds = 200
	}
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			s := randSource{rand.New(rand.NewPCG(seed, seed*7919))}
			kind := commit.Kind(seed % 3)
			d := New(id(1), kind, Limits{})
			e := New(id(1), kind, Limits{})
			accepted, reachable := 0, 0
			for i := 0; i < rounds; i++ {
				if checkRound(t, d, e, s) {
					accepted++
				}
				reachable += len(d.Snapshot().Deltas)
				if i%500 == 499 {
					// e drifts on its own too, so reconcile has real work.
					for j := 0; j < 20; j++ {
						e.Apply(genCommit(s, e, driftBase))
					}
				}
			}
			// The generator must exercise both outcomes, and reach depth.
			if accepted < rounds/10 || accepted > rounds*9/10 {
				t.Fatalf("%d of %d accepted: the generator is lopsided", accepted, rounds)
			}
			if d.Observables() < 4 {
				t.Fatalf("only %d observables after %d rounds", d.Observables(), rounds)
			}
			if reachable < 5*rounds {
				t.Fatalf("the state stays shallow: %d reachable slots on average", reachable/rounds)
			}
			t.Logf("%d/%d accepted, %d observables, %d slots, %d reachable slots on average",
				accepted, rounds, d.Observables(), d.Slots(), reachable/rounds)
		})
	}
}

func FuzzApply(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x07\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a"))
	f.Add([]byte(strings.Repeat("\x03\x11\x00\x07\x09\x01\x05", 40)))
	f.Add([]byte(strings.Repeat("\xff\x00\x80\x07\x40\x13", 60)))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &bytesSource{b: data}
		kind := commit.Kind(s.byte() % 3)
		d := New(id(1), kind, Limits{})
		e := New(id(1), kind, Limits{})
		for rounds := 0; !s.done() && rounds < 64; rounds++ {
			if s.byte()%8 == 0 {
				e.Apply(genCommit(s, e, driftBase)) // let e drift
				continue
			}
			checkRound(t, d, e, s)
		}
	})
}
