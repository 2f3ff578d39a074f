package document

import (
	"slices"
	"testing"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

// stateOf is the snapshot of a fresh object root id(1) with the commits.
func stateOf(t *testing.T, cs ...commit.Commit) commit.Commit {
	return newDoc(t, cs...).Snapshot()
}

func TestReconcileDiff(t *testing.T) {
	d := newDoc(t, cm(
		add(1, okey("same"), text("s")),
		add(1, okey("changed"), text("old")),
		add(1, okey("dropped"), text("x")),
		add(1, okey("a"), attach(commit.Object, 2)),
		add(2, okey("x"), commit.IntValue(1)),
	))
	state := stateOf(t, cm(
		add(1, okey("same"), text("s")),
		add(1, okey("changed"), text("new")),
		add(1, okey("fresh"), attach(commit.Array, 3)),
		add(3, apos("40"), text("y")),
	))
	c, err := d.Reconcile(state)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, d)
	want := []commit.Delta{
		rem(1, okey("a")),
		rep(1, okey("changed"), text("new")),
		rem(1, okey("dropped")),
		add(1, okey("fresh"), attach(commit.Array, 3)),
		add(3, apos("40"), text("y")),
	}
	slices.SortFunc(want, func(a, b commit.Delta) int { return compareDelta(&a, &b) })
	if !slices.Equal(c.Deltas, want) {
		t.Fatalf("commit\n%v\nwant\n%v", c.Deltas, want)
	}
	if !sameSnapshot(t, d.Snapshot(), state) {
		t.Fatalf("not at the state")
	}
	// The detached observable keeps its own slots.
	if v, ok := d.Get(id(2), okey("x")); !ok || v != commit.IntValue(1) || d.Reachable(id(2)) {
		t.Fatalf("detached 2: %v %v %v", v, ok, d.Reachable(id(2)))
	}
	// Again: nothing to do, nothing returned.
	if c, err := d.Reconcile(state); err != nil || len(c.Deltas) != 0 {
		t.Fatalf("second reconcile %v %v", c.Deltas, err)
	}
}

func TestReconcileEmptyState(t *testing.T) {
	d := newDoc(t, cm(add(1, okey("a"), attach(commit.Object, 2)), add(1, okey("b"), text("x"))))
	c, err := d.Reconcile(commit.Commit{})
	if err != nil || len(c.Deltas) != 2 {
		t.Fatalf("%v %v", c.Deltas, err)
	}
	if !d.Empty() || d.Reachable(id(2)) {
		t.Fatalf("root not emptied")
	}
	if c, err := d.Reconcile(commit.Commit{}); err != nil || len(c.Deltas) != 0 {
		t.Fatalf("%v %v", c.Deltas, err)
	}
}

func TestReconcileRefusesBadState(t *testing.T) {
	d := newDoc(t, cm(add(1, okey("a"), text("x"))))
	before := dump(d)
	for _, tc := range []struct {
		state  commit.Commit
		reason protocol.Reason
	}{
		{cm(add(5, okey("t"), text("x"))), protocol.Unreachable},
		{cm(rep(1, okey("a"), text("y"))), protocol.SlotMissing},
		{cm(add(1, okey("a"), alias(commit.Array, 1))), protocol.KindConflict},
	} {
		_, err := d.Reconcile(tc.state)
		if protocol.ReasonOf(err) != tc.reason {
			t.Fatalf("reason %v, want %s", err, tc.reason)
		}
		if dump(d) != before {
			t.Fatalf("refused state changed the document")
		}
	}
}

func TestReconcileMoveOutOfDetachedSubtree(t *testing.T) {
	// 3 lives under 2, which is reachable; the state attaches 3 at the root
	// and drops 2, so the commit must release 3 from 2 with a remove.
	d := newDoc(t, cm(add(1, okey("a"), attach(commit.Object, 2)), add(2, okey("z"), attach(commit.Object, 3)), add(2, okey("k"), text("kept"))))
	state := stateOf(t, cm(add(1, okey("b"), attach(commit.Object, 3))))
	c, err := d.Reconcile(state)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, d)
	if _, ok := findDelta(c, id(2), "z"); !ok {
		t.Fatalf("no remove of 2/z in %v", c.Deltas)
	}
	if !sameSnapshot(t, d.Snapshot(), state) {
		t.Fatalf("not at the state")
	}
	if v, _ := d.Get(id(2), okey("k")); v != text("kept") {
		t.Fatalf("detached 2 lost its other slots")
	}
}

func TestReconcileCutsStaleEdge(t *testing.T) {
	build := func() *Document {
		d := newDoc(t, cm(add(1, okey("a"), attach(commit.Object, 2)), add(2, okey("z"), attach(commit.Object, 3)),
			add(1, okey("q"), attach(commit.Array, 4))))
		mustApply(t, d, cm(rem(1, okey("a")), rem(1, okey("q")))) // 2 (holding 3) and 4 detached
		return d
	}
	d := build()
	state := stateOf(t, cm(add(1, okey("b"), attach(commit.Object, 3))))
	c, err := d.Reconcile(state)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, d)
	if len(c.Deltas) != 1 {
		t.Fatalf("commit %v: the cut has no delta", c.Deltas)
	}
	if _, ok := d.Get(id(2), okey("z")); ok {
		t.Fatalf("stale edge kept")
	}
	// A refused reconcile puts the cut edge back.
	d = build()
	before := dump(d)
	bad := stateOf(t, cm(add(1, okey("b"), attach(commit.Object, 3)), add(1, okey("c"), alias(commit.Map, 4))))
	if _, err := d.Reconcile(bad); protocol.ReasonOf(err) != protocol.KindConflict {
		t.Fatalf("reason %v", err)
	}
	checkInvariants(t, d)
	if dump(d) != before {
		t.Fatalf("refused reconcile changed the document:\n%s\n%s", dump(d), before)
	}
}

func TestReconcileIntoEmpty(t *testing.T) {
	state := stateOf(t, cm(add(1, okey("a"), attach(commit.Object, 2)), add(2, okey("x"), text("y")), add(1, okey("b"), text("z"))))
	scrambled := reversed(state)
	d := New(id(1), commit.Object, Limits{})
	c, err := d.Reconcile(scrambled)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, d)
	if !slices.Equal(c.Deltas, state.Deltas) || &c.Deltas[0] == &scrambled.Deltas[0] {
		t.Fatalf("commit %v, want the state in canonical order, in its own slice", c.Deltas)
	}
	if !sameSnapshot(t, d.Snapshot(), state) {
		t.Fatalf("not at the state")
	}
	// Already canonical, the state is still not handed back as it is.
	if c, err := New(id(1), commit.Object, Limits{}).Reconcile(state); err != nil || !slices.Equal(c.Deltas, state.Deltas) || &c.Deltas[0] == &state.Deltas[0] {
		t.Fatalf("commit %v, %v: want the state in its own slice", c.Deltas, err)
	}
	// A bad state leaves the empty document as it was.
	e := New(id(1), commit.Object, Limits{})
	if _, err := e.Reconcile(cm(add(1, okey("a"), text("x")), add(7, okey("b"), text("y")))); protocol.ReasonOf(err) != protocol.Unreachable {
		t.Fatalf("reason %v", err)
	}
	if e.Observables() != 1 || e.Slots() != 0 {
		t.Fatalf("refused state changed the document")
	}
	if c, err := e.Reconcile(commit.Commit{}); err != nil || len(c.Deltas) != 0 {
		t.Fatalf("%v %v", c, err)
	}
}
