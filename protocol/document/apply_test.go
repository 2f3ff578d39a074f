package document

import (
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

func TestApplyObjectSlots(t *testing.T) {
	d := newDoc(t, cm(add(1, okey("title"), text("a")), add(1, okey("n"), commit.IntValue(3))))
	if v, ok := d.Get(id(1), okey("title")); !ok || v != text("a") {
		t.Fatalf("title = %v %v", v, ok)
	}
	if _, ok := d.Get(id(1), commit.Ref{Kind: commit.Array, Key: "title"}); ok {
		t.Fatalf("a ref of another kind found a slot")
	}
	mustApply(t, d, cm(rep(1, okey("title"), text("b")), rem(1, okey("n"))))
	if v, _ := d.Get(id(1), okey("title")); v != text("b") {
		t.Fatalf("title = %v", v)
	}
	if d.Slots() != 1 || d.Len(id(1)) != 1 || d.Len(id(7)) != 0 || d.Observables() != 1 {
		t.Fatalf("counts %d %d %d", d.Slots(), d.Len(id(1)), d.Observables())
	}
	if r, k := d.Root(); r != id(1) || k != commit.Object {
		t.Fatalf("root %v %v", r, k)
	}
}

func TestApplyNestedSubtreeAnyOrder(t *testing.T) {
	c := cm(
		add(1, okey("list"), attach(commit.Array, 2)),
		add(2, apos("40"), attach(commit.Object, 3)),
		add(3, okey("name"), text("x")),
		add(1, okey("tags"), attach(commit.Map, 4)),
		add(4, mkey(9), commit.BoolValue(true)),
	)
	want := dump(newDoc(t, c))
	for _, perm := range permutations(len(c.Deltas)) {
		ds := make([]commit.Delta, len(perm))
		for i, j := range perm {
			ds[i] = c.Deltas[j]
		}
		if got := dump(newDoc(t, cm(ds...))); got != want {
			t.Fatalf("order %v gives\n%s\nwant\n%s", perm, got, want)
		}
	}
	d := newDoc(t, c)
	if p, ok := d.Path(id(3)); !ok || !slices.Equal(p, []string{"list", "40"}) {
		t.Fatalf("path of 3 = %q %v", p, ok)
	}
	if p, ok := d.Path(id(1)); !ok || p == nil || len(p) != 0 {
		t.Fatalf("root path = %#v %v", p, ok)
	}
}

func permutations(n int) [][]int {
	var out [][]int
	var rec func(p []int, used []bool)
	rec = func(p []int, used []bool) {
		if len(p) == n {
			out = append(out, slices.Clone(p))
			return
		}
		for i := 0; i < n; i++ {
			if !used[i] {
				used[i] = true
				rec(append(p, i), used)
				used[i] = false
			}
		}
	}
	rec(nil, make([]bool, n))
	return out
}

func TestApplyEmptyObservableFromReference(t *testing.T) {
	d := newDoc(t, cm(add(1, okey("tags"), attach(commit.Map, 2))))
	if k, ok := d.Kind(id(2)); !ok || k != commit.Map || !d.Reachable(id(2)) {
		t.Fatalf("kind %v %v reachable %v", k, ok, d.Reachable(id(2)))
	}
}

func TestApplyMove(t *testing.T) {
	d := newDoc(t, cm(
		add(1, okey("drafts"), attach(commit.Array, 2)),
		add(1, okey("published"), attach(commit.Array, 3)),
		add(2, apos("40"), attach(commit.Object, 4)),
		add(4, okey("title"), text("a post")),
	))
	move := cm(add(3, apos("40"), attach(commit.Object, 4)), rem(2, apos("40")))
	mustApply(t, d, move)
	if p, _ := d.Path(id(4)); !slices.Equal(p, []string{"published", "40"}) {
		t.Fatalf("path after move %q", p)
	}
}

func TestApplyReplaceAttachWithItself(t *testing.T) {
	d := newDoc(t, cm(add(1, okey("blocks"), attach(commit.Array, 2))))
	mustApply(t, d, cm(rep(1, okey("blocks"), attach(commit.Array, 2)), add(2, apos("60"), text("x"))))
}

func TestApplyWriteWhileDetaching(t *testing.T) {
	d := newDoc(t, cm(add(1, okey("a"), attach(commit.Object, 2)), add(2, okey("x"), commit.IntValue(1))))
	inv := mustApply(t, d, cm(rem(1, okey("a")), rep(2, okey("x"), commit.IntValue(2))))
	if d.Reachable(id(2)) {
		t.Fatalf("2 is still reachable")
	}
	// Detached, it keeps its slots, and a write into it is refused.
	if v, _ := d.Get(id(2), okey("x")); v != commit.IntValue(2) {
		t.Fatalf("detached slot %v", v)
	}
	refused(t, d, cm(rep(2, okey("x"), commit.IntValue(3))), protocol.Unreachable)
	mustApply(t, d, inv)
	if v, _ := d.Get(id(2), okey("x")); v != commit.IntValue(1) || !d.Reachable(id(2)) {
		t.Fatalf("after inverse %v %v", v, d.Reachable(id(2)))
	}
}

func TestApplyReattachKeepsSlots(t *testing.T) {
	d := newDoc(t, cm(add(1, okey("a"), attach(commit.Object, 2)), add(2, okey("x"), commit.IntValue(1))))
	mustApply(t, d, cm(rem(1, okey("a"))))
	mustApply(t, d, cm(add(1, okey("b"), attach(commit.Object, 2))))
	if p, _ := d.Path(id(2)); !slices.Equal(p, []string{"b"}) {
		t.Fatalf("path %q", p)
	}
	if v, _ := d.Get(id(2), okey("x")); v != commit.IntValue(1) {
		t.Fatalf("reattached lost its slot: %v", v)
	}
	// The kind stays fixed while detached.
	mustApply(t, d, cm(rem(1, okey("b"))))
	refused(t, d, cm(add(1, okey("c"), attach(commit.Array, 2))), protocol.KindConflict)
}

func TestApplyReattachThroughDetachedParent(t *testing.T) {
	// 3 hangs under 2; detach 2, then reattach 2 and write into 3 in one commit.
	d := newDoc(t, cm(add(1, okey("a"), attach(commit.Object, 2)), add(2, okey("b"), attach(commit.Object, 3))))
	mustApply(t, d, cm(rem(1, okey("a"))))
	c := cm(add(1, okey("z"), attach(commit.Object, 2)), add(3, okey("x"), text("y")))
	if got := d.Paths(c); !slices.Equal(got[1], []string{"z", "b", "x"}) {
		t.Fatalf("paths %q", got)
	}
	mustApply(t, d, c)
}

func TestApplyMoveIntoOwnSubtreeDetachesCycle(t *testing.T) {
	d := newDoc(t, cm(add(1, okey("a"), attach(commit.Object, 2)), add(2, okey("b"), attach(commit.Object, 3))))
	mustApply(t, d, cm(rem(1, okey("a")), add(3, okey("loop"), attach(commit.Object, 2))))
	for _, x := range []int{2, 3} {
		if d.Reachable(id(x)) {
			t.Fatalf("%d reachable in a detached cycle", x)
		}
		if _, ok := d.Path(id(x)); ok {
			t.Fatalf("%d has a path", x)
		}
	}
	refused(t, d, cm(add(3, okey("x"), text("y"))), protocol.Unreachable)
	if s := d.Snapshot(); len(s.Deltas) != 0 {
		t.Fatalf("snapshot sees the cycle: %v", s.Deltas)
	}
	// A write into the cycle through a fresh attach of one member works.
	c := cm(add(1, okey("back"), attach(commit.Object, 3)), rem(2, okey("b")), add(2, okey("x"), text("y")))
	if got := d.Paths(c); !slices.Equal(got[2], []string{"back", "loop", "x"}) {
		t.Fatalf("paths %q", got)
	}
	mustApply(t, d, c)
	if p, _ := d.Path(id(2)); !slices.Equal(p, []string{"back", "loop"}) {
		t.Fatalf("path %q", p)
	}
}

func TestApplyRefusals(t *testing.T) {
	base := func() *Document {
		return newDoc(t, cm(
			add(1, okey("title"), text("a page")),
			add(1, okey("a"), attach(commit.Object, 2)),
			add(2, okey("x"), commit.IntValue(1)),
		))
	}
	cases := []struct {
		name   string
		c      commit.Commit
		reason protocol.Reason
		path   []string
	}{
		{"kind conflict within commit", cm(add(5, okey("a"), commit.IntValue(1)), add(5, apos("40"), commit.IntValue(2))), protocol.KindConflict, nil},
		{"kind conflict with document", cm(add(2, apos("40"), commit.IntValue(2))), protocol.KindConflict, []string{"a", "40"}},
		{"kind conflict on reference", cm(add(1, okey("b"), alias(commit.Array, 2))), protocol.KindConflict, []string{"b"}},
		{"kind conflict on root", cm(add(1, okey("b"), alias(commit.Map, 1))), protocol.KindConflict, []string{"b"}},
		{"add over existing", cm(add(1, okey("title"), text("b"))), protocol.SlotExists, []string{"title"}},
		{"replace missing", cm(rep(1, okey("nope"), text("b"))), protocol.SlotMissing, []string{"nope"}},
		{"remove missing", cm(rem(2, okey("nope"))), protocol.SlotMissing, []string{"a", "nope"}},
		{"two attach edges", cm(add(1, okey("p"), attach(commit.Object, 4)), add(1, okey("q"), attach(commit.Object, 4))), protocol.MultipleAttach, []string{"p"}},
		{"second attach", cm(add(1, okey("b"), attach(commit.Object, 2))), protocol.MultipleAttach, []string{"b"}},
		{"second attach kept by same replace", cm(rep(1, okey("a"), attach(commit.Object, 2)), add(1, okey("b"), attach(commit.Object, 2))), protocol.MultipleAttach, []string{"b"}},
		{"attach root", cm(add(1, okey("self"), attach(commit.Object, 1))), protocol.MultipleAttach, []string{"self"}},
		{"unattached target", cm(add(9, okey("title"), text("x"))), protocol.Unreachable, nil},
		{"alias does not attach", cm(add(1, okey("see"), alias(commit.Object, 5)), add(5, okey("t"), text("x"))), protocol.Unreachable, nil},
		{"self attach of new", cm(add(1, okey("n"), alias(commit.Object, 6)), add(6, okey("me"), attach(commit.Object, 6))), protocol.Unreachable, nil},
		{"empty", cm(), protocol.EmptyCommit, nil},
		{"duplicate slot", cm(add(1, okey("z"), text("1")), rep(1, okey("z"), text("2"))), protocol.DuplicateSlot, nil},
		{"bad op", cm(commit.Delta{Op: 7, ID: id(1), Ref: okey("z")}), protocol.UnknownDeltaType, nil},
		{"bad ref kind", cm(commit.Delta{Op: commit.Add, ID: id(1), Ref: commit.Ref{Kind: 5, Key: "z"}}), protocol.UnknownRefKind, nil},
		{"bad position", cm(add(1, commit.Ref{Kind: commit.Array, Key: "\x40\x00"}, text("z"))), protocol.InvalidPosition, nil},
		{"empty position", cm(add(1, commit.Ref{Kind: commit.Array}, text("z"))), protocol.InvalidPosition, nil},
		{"short map key", cm(add(1, commit.Ref{Kind: commit.Map, Key: "abc"}, text("z"))), protocol.InvalidRef, nil},
		{"bad key utf8", cm(add(1, okey("\xc3\x28"), text("z"))), protocol.InvalidUTF8, nil},
		{"bad text utf8", cm(add(1, okey("z"), text("\xc3\x28"))), protocol.InvalidUTF8, nil},
		{"nan", cm(add(1, okey("z"), commit.Value{Type: commit.Float, Float: nan()})), protocol.NonFiniteFloat, nil},
		{"whole float", cm(add(1, okey("z"), commit.Value{Type: commit.Float, Float: 3})), protocol.NonCanonicalFloat, nil},
		{"big int", cm(add(1, okey("z"), commit.IntValue(1<<53+1))), protocol.IntegerOutOfRange, nil},
		{"bad edge", cm(add(1, okey("z"), commit.RefTo(commit.Reference{Edge: 9, ID: id(3)}))), protocol.UnknownEdgeKind, nil},
		{"bad reference kind", cm(add(1, okey("z"), commit.RefTo(commit.Reference{Kind: 9, ID: id(3)}))), protocol.InvalidReference, nil},
		{"bad value type", cm(add(1, okey("z"), commit.Value{Type: 99})), protocol.UnsupportedMajor, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := refused(t, base(), tc.c, tc.reason)
			if r.Reason() != tc.reason {
				t.Fatalf("Reason() = %s", r.Reason())
			}
			if got := r.Reasons[0].Path; !slices.Equal(got, tc.path) || (got == nil) != (tc.path == nil) {
				t.Fatalf("path %q, want %q", got, tc.path)
			}
		})
	}
}

func TestApplyPrecedence(t *testing.T) {
	d := newDoc(t, cm(add(1, okey("a"), attach(commit.Object, 2)), add(1, okey("title"), text("x"))))
	// invalid/028: the id is also unreachable; kind-conflict wins.
	r := refused(t, d, cm(add(5, okey("a"), commit.IntValue(1)), add(5, apos("40"), commit.IntValue(2))), protocol.KindConflict)
	var got []protocol.Reason
	for _, e := range r.Reasons {
		got = append(got, e.Reason)
	}
	want := []protocol.Reason{protocol.KindConflict, protocol.Unreachable, protocol.Unreachable}
	if !slices.Equal(got, want) {
		t.Fatalf("reasons %v, want %v", got, want)
	}
	// Every rank at once, deltas in either order: same reasons, same order.
	c := cm(
		add(1, okey("title"), text("y")),            // slot-exists
		add(9, okey("t"), text("z")),                // unreachable
		add(1, okey("b"), attach(commit.Object, 2)), // multiple-attach
		add(1, okey("c"), alias(commit.Array, 2)),   // kind-conflict
	)
	first := refused(t, d, c, protocol.KindConflict)
	slices.Reverse(c.Deltas)
	second := refused(t, d, c, protocol.KindConflict)
	if first.Error() != second.Error() {
		t.Fatalf("order changed the refusal:\n%v\n%v", first, second)
	}
	got = got[:0]
	for _, e := range first.Reasons {
		got = append(got, e.Reason)
	}
	want = []protocol.Reason{protocol.KindConflict, protocol.MultipleAttach, protocol.Unreachable, protocol.SlotExists}
	if !slices.Equal(got, want) {
		t.Fatalf("reasons %v, want %v", got, want)
	}
}

func TestApplyRefusalBounded(t *testing.T) {
	d := newDoc(t)
	var ds []commit.Delta
	for i := 0; i < 100; i++ {
		ds = append(ds, add(100+i, okey("x"), text("y")))
	}
	r := refused(t, d, cm(ds...), protocol.Unreachable)
	if len(r.Reasons) != MaxReasons {
		t.Fatalf("%d reasons, want %d", len(r.Reasons), MaxReasons)
	}
}

func TestApplyLimits(t *testing.T) {
	d := New(id(1), commit.Object, Limits{MaxObservables: 3, MaxSlots: 4})
	mustApply(t, d, cm(add(1, okey("a"), attach(commit.Object, 2)), add(1, okey("b"), text("x"))))
	refused(t, d, cm(add(1, okey("c"), attach(commit.Object, 3)), add(1, okey("d"), alias(commit.Object, 4))), protocol.TooManyObservables)
	mustApply(t, d, cm(add(1, okey("c"), attach(commit.Object, 3)), add(2, okey("x"), text("y"))))
	refused(t, d, cm(add(2, okey("y"), text("y")), add(3, okey("y"), text("y"))), protocol.TooManySlots)
	// A remove makes room within the same commit.
	mustApply(t, d, cm(add(2, okey("y"), text("y")), rem(1, okey("b"))))
	// A rule broken outranks a bound exceeded.
	refused(t, d, cm(add(2, okey("y"), text("y")), add(3, okey("y"), text("y"))), protocol.SlotExists)
	if l := (Limits{}).withDefaults(); l.MaxObservables != DefaultMaxObservables || l.MaxSlots != DefaultMaxSlots {
		t.Fatalf("defaults %+v", l)
	}
}

func TestPaths(t *testing.T) {
	d := newDoc(t, cm(add(1, okey("list"), attach(commit.Array, 2)), add(2, apos("4001"), attach(commit.Map, 3))))
	c := cm(
		add(3, mkey(7), attach(commit.Object, 8)),
		add(8, okey("name"), text("x")),
		add(9, okey("lost"), text("x")),
		rem(1, okey("list")),
	)
	got := d.Paths(c)
	want := [][]string{
		{"list", "4001", id(7).String()},
		{"list", "4001", id(7).String(), "name"},
		nil,
		{"list"},
	}
	if len(got) != len(want) {
		t.Fatalf("paths %q", got)
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) || (got[i] == nil) != (want[i] == nil) {
			t.Fatalf("path %d = %q, want %q", i, got[i], want[i])
		}
	}
	if got := d.Paths(cm()); len(got) != 0 {
		t.Fatalf("paths of empty commit %q", got)
	}
	if got := d.Paths(cm(commit.Delta{Op: 9, ID: id(1)})); len(got) != 1 || got[0] != nil {
		t.Fatalf("paths of malformed commit %q", got)
	}
	// A moved target keeps its existing place.
	mustApply(t, d, cm(add(3, mkey(7), attach(commit.Object, 8))))
	mv := cm(rem(3, mkey(7)), add(1, okey("top"), attach(commit.Object, 8)), add(8, okey("n"), text("x")))
	if got := d.Paths(mv); !slices.Equal(got[2], []string{"list", "4001", id(7).String(), "n"}) {
		t.Fatalf("moved target path %q", got[2])
	}
}

func TestRange(t *testing.T) {
	d := newDoc(t, cm(add(1, okey("l"), attach(commit.Array, 2)),
		add(2, apos("40"), text("c")), add(2, apos("2001"), text("b")), add(2, apos("20"), text("a")), add(2, apos("30"), text("bb"))))
	var got []string
	d.Range(id(2), func(r commit.Ref, v commit.Value) bool {
		got = append(got, Step(r)+"="+v.Str)
		return true
	})
	if want := []string{"20=a", "2001=b", "30=bb", "40=c"}; !slices.Equal(got, want) {
		t.Fatalf("array order %q, want %q", got, want)
	}
	n := 0
	d.Range(id(2), func(commit.Ref, commit.Value) bool { n++; return false })
	d.Range(id(77), func(commit.Ref, commit.Value) bool { n++; return true })
	if n != 1 {
		t.Fatalf("range did not stop: %d", n)
	}
}

func TestCloneIndependent(t *testing.T) {
	d := newDoc(t, cm(add(1, okey("a"), attach(commit.Object, 2)), add(2, okey("x"), text("y"))))
	c := d.Clone()
	checkInvariants(t, c)
	if dump(c) != dump(d) {
		t.Fatalf("clone differs")
	}
	mustApply(t, c, cm(rem(1, okey("a"))))
	if !d.Reachable(id(2)) || c.Reachable(id(2)) {
		t.Fatalf("clone shares state")
	}
}

func TestCompact(t *testing.T) {
	d := newDoc(t, cm(
		add(1, okey("a"), attach(commit.Object, 2)),
		add(2, okey("b"), attach(commit.Object, 3)),
		add(1, okey("see"), alias(commit.Object, 3)),
		add(3, okey("x"), text("y")),
	))
	mustApply(t, d, cm(rem(1, okey("a"))))
	if n := d.Compact(); n != 1 {
		t.Fatalf("dropped %d, want 1 (2 goes, 3 stays named)", n)
	}
	checkInvariants(t, d)
	r := New(id(1), commit.Object, Limits{})
	mustApply(t, r, d.Snapshot())
	if dump(r) != dump(d) {
		t.Fatalf("compacted\n%s\nrebuilt\n%s", dump(d), dump(r))
	}
}

// TestApplyOwnsStrings: a slot must not keep the caller's buffer alive
// (a decoded commit's short strings share one buffer).
func TestApplyOwnsStrings(t *testing.T) {
	buf := strings.Repeat("k", 1<<16)
	inBuf := func(s string) bool {
		p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(buf)))
		return p >= lo && p < lo+uintptr(len(buf))
	}
	d := newDoc(t, cm(
		add(1, okey(buf[:2]), text(buf[10:20])),
		add(1, okey(buf[:3]), attach(commit.Object, 2)),
		add(2, okey("b"), commit.BytesValue([]byte(buf[5:9]))),
	))
	mustApply(t, d, cm(add(2, okey(buf[:4]), text("x")), rep(2, okey("b"), text(buf[30:40]))))
	for _, o := range d.obs {
		for _, e := range o.entries {
			if inBuf(e.key) || (e.v.Str != "" && inBuf(e.v.Str)) {
				t.Fatalf("%s keeps the caller's buffer: %q", o.id, e.key)
			}
		}
		if o.parent != nil && inBuf(o.parentKey) {
			t.Fatalf("%s parent key keeps the caller's buffer", o.id)
		}
		for k := range o.index {
			if inBuf(k) {
				t.Fatalf("%s index keeps the caller's buffer", o.id)
			}
		}
	}
}

// TestApplyLoadAfterEmptying: a second load into a root emptied by removes
// leaves no stale key map behind, so later writes find the loaded slots.
func TestApplyLoadAfterEmptying(t *testing.T) {
	d := newDoc(t, cm(add(1, okey("a"), text("x"))))
	mustApply(t, d, cm(rep(1, okey("a"), text("y")))) // a lookup
	mustApply(t, d, cm(rem(1, okey("a"))))
	mustApply(t, d, cm(add(1, okey("b"), attach(commit.Object, 2)), add(1, okey("c"), text("z")), add(2, okey("d"), text("w"))))
	mustApply(t, d, cm(rep(1, okey("c"), text("v")), rep(2, okey("d"), text("u")), rem(1, okey("b"))))
	if v, ok := d.Get(id(1), okey("c")); !ok || v != text("v") {
		t.Fatalf("c is %v %v", v, ok)
	}
	if d.Reachable(id(2)) || d.Len(id(2)) != 1 {
		t.Fatalf("2 should be detached with its slot")
	}
}
