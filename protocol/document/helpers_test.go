package document

import (
	"bytes"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

// id builds the fixture-style id n: eleven zero bytes and then n.
func id(n int) commit.ID {
	var x commit.ID
	x[10], x[11] = byte(n>>8), byte(n)
	return x
}

func okey(k string) commit.Ref { return commit.ObjectKey(k) }

func apos(h string) commit.Ref {
	b, err := hex.DecodeString(h)
	if err != nil {
		panic(err)
	}
	return commit.ArrayKey(b)
}

func mkey(n int) commit.Ref { return commit.MapKey(id(n)) }

func attach(k commit.Kind, n int) commit.Value {
	return commit.RefTo(commit.Reference{Edge: commit.Attach, Kind: k, ID: id(n)})
}

func alias(k commit.Kind, n int) commit.Value {
	return commit.RefTo(commit.Reference{Edge: commit.Alias, Kind: k, ID: id(n)})
}

func add(n int, r commit.Ref, v commit.Value) commit.Delta {
	return commit.Delta{Op: commit.Add, ID: id(n), Ref: r, Value: v}
}

func rep(n int, r commit.Ref, v commit.Value) commit.Delta {
	return commit.Delta{Op: commit.Replace, ID: id(n), Ref: r, Value: v}
}

func rem(n int, r commit.Ref) commit.Delta {
	return commit.Delta{Op: commit.Remove, ID: id(n), Ref: r}
}

func cm(ds ...commit.Delta) commit.Commit { return commit.Commit{Deltas: ds} }

func text(s string) commit.Value { return commit.TextValue(s) }

// newDoc is an object root id(1) with the commits applied.
func newDoc(t testing.TB, cs ...commit.Commit) *Document {
	t.Helper()
	d := New(id(1), commit.Object, Limits{})
	for _, c := range cs {
		mustApply(t, d, c)
	}
	return d
}

func mustApply(t testing.TB, d *Document, c commit.Commit) commit.Commit {
	t.Helper()
	inv, err := d.Apply(c)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	checkInvariants(t, d)
	return inv
}

// refused applies c expecting a refusal for reason, and that nothing moved.
func refused(t testing.TB, d *Document, c commit.Commit, reason protocol.Reason) *Refusal {
	t.Helper()
	before := dump(d)
	_, err := d.Apply(c)
	if err == nil {
		t.Fatalf("apply: accepted, want %s", reason)
	}
	r, ok := err.(*Refusal)
	if !ok {
		t.Fatalf("apply: error %T %v, want *Refusal", err, err)
	}
	if got := protocol.ReasonOf(err); got != reason {
		t.Fatalf("apply: reason %s, want %s (%v)", got, reason, err)
	}
	if after := dump(d); after != before {
		t.Fatalf("refused commit changed the document:\nbefore %s\nafter  %s", before, after)
	}
	checkInvariants(t, d)
	return r
}

// dump is every held observable, detached ones included, with its slots
// and its attach parent: equal dumps mean equal documents.
func dump(d *Document) string {
	ids := make([]commit.ID, 0, len(d.obs))
	for x := range d.obs {
		ids = append(ids, x)
	}
	slices.SortFunc(ids, func(a, b commit.ID) int { return bytes.Compare(a[:], b[:]) })
	b := make([]byte, 0, 64*len(ids)+32*d.slots)
	b = append(b, d.root.id[:]...)
	b = strconv.AppendInt(b, int64(d.slots), 10)
	for _, x := range ids {
		o := d.obs[x]
		b = append(b, '|')
		b = append(b, x[:]...)
		b = append(b, byte('0'+o.kind))
		if o.parent != nil {
			b = append(b, '@')
			b = append(b, o.parent.id[:]...)
			b = strconv.AppendQuote(b, o.parentKey)
		}
		es := slices.Clone(o.entries)
		slices.SortFunc(es, func(a, b slot) int { return strings.Compare(a.key, b.key) })
		for _, e := range es {
			b = strconv.AppendQuote(b, e.key)
			b = appendValue(b, e.v)
		}
	}
	return string(b)
}

func appendValue(b []byte, v commit.Value) []byte {
	b = append(b, '=', byte('0'+v.Type))
	switch v.Type {
	case commit.Bool:
		b = strconv.AppendBool(b, v.Bool)
	case commit.Int:
		b = strconv.AppendInt(b, v.Int, 10)
	case commit.Float:
		b = strconv.AppendFloat(b, v.Float, 'g', -1, 64)
	case commit.Text, commit.Bytes:
		b = strconv.AppendQuote(b, v.Str)
	case commit.RefValue:
		b = append(b, byte('0'+v.Ref.Edge), byte('0'+v.Ref.Kind))
		b = append(b, v.Ref.ID[:]...)
	}
	return append(b, ';')
}

// checkInvariants is what every reachable state must satisfy: one attach
// edge per observable, anywhere; parents matching the slots that attach;
// every referenced id held with the referenced kind; counts and caches
// true.
func checkInvariants(t testing.TB, d *Document) {
	t.Helper()
	if d.obs[d.root.id] != d.root || d.root.parent != nil {
		t.Fatalf("root is not held as itself, or has a parent")
	}
	edges := map[commit.ID]int{}
	slots := 0
	for x, o := range d.obs {
		if o.id != x {
			t.Fatalf("%s held under %s", o.id, x)
		}
		slots += o.len()
		if o.index != nil && len(o.index) != len(o.entries) {
			t.Fatalf("%s index holds %d, entries %d", x, len(o.index), len(o.entries))
		}
		attaches := 0
		for i, e := range o.entries {
			k, v := e.key, e.v
			if j, ok := o.index[k]; o.index != nil && (!ok || int(j) != i) {
				t.Fatalf("%s index of %x is %d, not %d", x, k, j, i)
			}
			if v.Type != commit.RefValue {
				continue
			}
			c := d.obs[v.Ref.ID]
			if c == nil {
				t.Fatalf("%s/%x names %s, which is not held", x, k, v.Ref.ID)
			}
			if c.kind != v.Ref.Kind {
				t.Fatalf("%s/%x names %s as %s, it is %s", x, k, v.Ref.ID, v.Ref.Kind, c.kind)
			}
			if v.Ref.Edge != commit.Attach {
				continue
			}
			attaches++
			edges[v.Ref.ID]++
			if c.parent != o || c.parentKey != k {
				t.Fatalf("%s is attached by %s/%x but its parent says otherwise", v.Ref.ID, x, k)
			}
		}
		if attaches != o.attaches {
			t.Fatalf("%s counts %d attaches, holds %d", x, o.attaches, attaches)
		}
		if o.orderOK {
			seen := map[int32]bool{}
			for _, i := range o.order {
				if i < 0 || int(i) >= len(o.entries) || seen[i] {
					t.Fatalf("%s order cache is stale", x)
				}
				seen[i] = true
			}
			if len(o.order) != len(o.entries) || !slices.IsSortedFunc(o.order, func(a, b int32) int { return compareKey(o.entries[a].key, o.entries[b].key) }) {
				t.Fatalf("%s order cache is stale", x)
			}
		}
	}
	for x, o := range d.obs {
		if n := edges[x]; n > 1 || (n == 1) != (o.parent != nil) {
			t.Fatalf("%s has %d attach edges, parent %v", x, n, o.parent != nil)
		}
	}
	if edges[d.root.id] != 0 {
		t.Fatalf("the root is attached")
	}
	if slots != d.slots {
		t.Fatalf("slot count %d, holds %d", d.slots, slots)
	}
}

func nan() float64 { return math.NaN() }
