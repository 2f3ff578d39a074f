package document

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/weftgate/weftgate/protocol/commit"
)

// bigID is a distinct id per n, spread over the bytes as random ids are.
func bigID(n int) commit.ID {
	var x commit.ID
	binary.BigEndian.PutUint64(x[:8], uint64(n)*0x9e3779b97f4a7c15)
	binary.BigEndian.PutUint32(x[8:], uint32(n))
	return x
}

func position(i int) string {
	// two bytes, never ending in zero, increasing with i
	return string([]byte{byte(1 + i/255), byte(1 + i%255)})
}

// bigState is a state of items objects under a map at root "items", each
// with 20 fields and an array of 79 entries, 101 slots an item, and 9 more
// root fields: 990 items make 100,000 slots. A salt changes about 1 in 500
// field values.
func bigState(items int, salt int) commit.Commit {
	root := bigID(0)
	items0 := bigID(1)
	var ds []commit.Delta
	ds = append(ds, commit.Delta{Op: commit.Add, ID: root, Ref: commit.ObjectKey("items"),
		Value: commit.RefTo(commit.Reference{Edge: commit.Attach, Kind: commit.Map, ID: items0})})
	for r := 0; r < 9; r++ {
		ds = append(ds, commit.Delta{Op: commit.Add, ID: root, Ref: commit.ObjectKey(fmt.Sprintf("r%d", r)), Value: commit.BoolValue(true)})
	}
	for i := 0; i < items; i++ {
		it, arr := bigID(10+2*i), bigID(11+2*i)
		ds = append(ds, commit.Delta{Op: commit.Add, ID: items0, Ref: commit.MapKey(it),
			Value: commit.RefTo(commit.Reference{Edge: commit.Attach, Kind: commit.Object, ID: it})})
		ds = append(ds, commit.Delta{Op: commit.Add, ID: it, Ref: commit.ObjectKey("list"),
			Value: commit.RefTo(commit.Reference{Edge: commit.Attach, Kind: commit.Array, ID: arr})})
		for f := 0; f < 20; f++ {
			v := commit.IntValue(int64(i * f))
			if f%2 == 1 {
				v = commit.TextValue(fmt.Sprintf("field %d of %d", f, i))
			}
			if (i+f)%100 == salt%100 && salt != 0 {
				v = commit.TextValue("changed")
			}
			ds = append(ds, commit.Delta{Op: commit.Add, ID: it, Ref: commit.ObjectKey(fmt.Sprintf("f%02d", f)), Value: v})
		}
		for p := 0; p < 79; p++ {
			ds = append(ds, commit.Delta{Op: commit.Add, ID: arr, Ref: commit.ArrayKey([]byte(position(p))), Value: commit.IntValue(int64(p))})
		}
	}
	slices.SortFunc(ds, func(a, b commit.Delta) int { return compareDelta(&a, &b) })
	return commit.Commit{Deltas: ds}
}

func bigDoc(tb testing.TB, items, salt int) *Document {
	d := New(bigID(0), commit.Object, Limits{})
	if _, err := d.Apply(bigState(items, salt)); err != nil {
		tb.Fatal(err)
	}
	return d
}

// cpuClock reports CPU time per op next to the wall-clock ns/op.
type cpuClock struct{ start time.Duration }

func startCPU(b *testing.B) cpuClock { b.ResetTimer(); return cpuClock{cpuNow()} }

func (c cpuClock) report(b *testing.B, perOp float64, unit string) {
	if used := cpuNow() - c.start; used > 0 && c.start > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N)/perOp, unit)
	}
}

func TestBigState(t *testing.T) {
	d := bigDoc(t, 990, 0)
	if d.Slots() != 100_000 {
		t.Fatalf("%d slots", d.Slots())
	}
	checkInvariants(t, d)
	if !sameSnapshot(t, d.Snapshot(), bigState(990, 0)) {
		t.Fatalf("snapshot is not the state")
	}
	e := bigDoc(t, 990, 7)
	changed, plain := 0, bigState(990, 0).Deltas
	for i, dl := range bigState(990, 7).Deltas {
		if dl.Value != plain[i].Value {
			changed++
		}
	}
	c, err := e.Reconcile(d.Snapshot())
	if err != nil || len(c.Deltas) != changed || changed < 100 {
		t.Fatalf("reconcile: %d deltas for %d changes, %v", len(c.Deltas), changed, err)
	}
	if !sameSnapshot(t, e.Snapshot(), d.Snapshot()) {
		t.Fatalf("reconciled state differs")
	}
}

func BenchmarkApply(b *testing.B) {
	const items = 200
	run := func(b *testing.B, commits []commit.Commit) {
		d := bigDoc(b, items, 0)
		deltas := 0
		b.ReportAllocs()
		cpu := startCPU(b)
		for i := 0; i < b.N; i++ {
			c := commits[i%len(commits)]
			if _, err := d.Apply(c); err != nil {
				b.Fatal(err)
			}
			deltas += len(c.Deltas)
		}
		b.ReportMetric(float64(deltas)/b.Elapsed().Seconds(), "deltas/s")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(deltas), "ns/delta")
		cpu.report(b, float64(deltas)/float64(b.N), "cpu-ns/delta")
	}
	// 64 replaces spread over 8 items, as a busy editing stream writes.
	b.Run("replace", func(b *testing.B) {
		var commits []commit.Commit
		for r := 0; r < 64; r++ {
			var ds []commit.Delta
			for k := 0; k < 64; k++ {
				it := bigID(10 + 2*((r*8+k/8)%items))
				ds = append(ds, commit.Delta{Op: commit.Replace, ID: it, Ref: commit.ObjectKey(fmt.Sprintf("f%02d", k%8+8*(r%2))), Value: commit.IntValue(int64(r*k + 1))})
			}
			slices.SortFunc(ds, func(a, b commit.Delta) int { return compareDelta(&a, &b) })
			commits = append(commits, commit.Commit{Deltas: ds})
		}
		run(b, commits)
	})
	// One field edit a commit, what an editor sends as someone types; and
	// the same through Update, as a replica takes others' edits.
	var edits []commit.Commit
	for r := 0; r < 64; r++ {
		it := bigID(10 + 2*(r%items))
		edits = append(edits, commit.Commit{Deltas: []commit.Delta{{Op: commit.Replace, ID: it, Ref: commit.ObjectKey(fmt.Sprintf("f%02d", r%16)), Value: commit.TextValue("edited text")}}})
	}
	b.Run("one-edit", func(b *testing.B) { run(b, edits) })
	b.Run("one-edit-update", func(b *testing.B) {
		d := bigDoc(b, items, 0)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := d.Update(edits[i%len(edits)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Array inserts then their removal: the key set changes every commit.
	b.Run("insert-remove", func(b *testing.B) {
		var ins, del []commit.Delta
		for k := 0; k < 32; k++ {
			arr := bigID(11 + 2*(k%4))
			pos := commit.ArrayKey([]byte{2, byte(k + 1), 7})
			ins = append(ins, commit.Delta{Op: commit.Add, ID: arr, Ref: pos, Value: commit.TextValue("new")})
			del = append(del, commit.Delta{Op: commit.Remove, ID: arr, Ref: pos})
		}
		slices.SortFunc(ins, func(a, b commit.Delta) int { return compareDelta(&a, &b) })
		slices.SortFunc(del, func(a, b commit.Delta) int { return compareDelta(&a, &b) })
		run(b, []commit.Commit{{Deltas: ins}, {Deltas: del}})
	})
	// A new item with 20 fields attached, then detached and reattached.
	b.Run("subtree", func(b *testing.B) {
		it := bigID(1_000_000)
		ds := []commit.Delta{{Op: commit.Add, ID: bigID(1), Ref: commit.MapKey(it),
			Value: commit.RefTo(commit.Reference{Edge: commit.Attach, Kind: commit.Object, ID: it})}}
		for f := 0; f < 20; f++ {
			ds = append(ds, commit.Delta{Op: commit.Add, ID: it, Ref: commit.ObjectKey(fmt.Sprintf("f%02d", f)), Value: commit.IntValue(int64(f))})
		}
		slices.SortFunc(ds, func(a, b commit.Delta) int { return compareDelta(&a, &b) })
		d := bigDoc(b, items, 0)
		inv, err := d.Apply(commit.Commit{Deltas: ds})
		if err != nil {
			b.Fatal(err)
		}
		back, err := d.Apply(inv)
		if err != nil {
			b.Fatal(err)
		}
		run(b, []commit.Commit{{Deltas: ds}, inv, back, inv})
	})
}

// BenchmarkApplyState100k applies a 100,000-slot state to an empty root,
// as loading a document from its snapshot does.
func BenchmarkApplyState100k(b *testing.B) {
	state := bigState(990, 0)
	b.ReportAllocs()
	cpu := startCPU(b)
	for i := 0; i < b.N; i++ {
		d := New(bigID(0), commit.Object, Limits{})
		if _, err := d.Apply(state); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(state.Deltas))/b.Elapsed().Seconds(), "deltas/s")
	cpu.report(b, 1e6, "cpu-ms/op")
}

func BenchmarkSnapshot100k(b *testing.B) {
	d := bigDoc(b, 990, 0)
	b.Run("warm", func(b *testing.B) {
		b.ReportAllocs()
		cpu := startCPU(b)
		for i := 0; i < b.N; i++ {
			if s := d.Snapshot(); len(s.Deltas) != 100_000 {
				b.Fatal(len(s.Deltas))
			}
		}
		cpu.report(b, 1e6, "cpu-ms/op")
	})
	// Every key order cache stale, as after edits everywhere.
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			for _, o := range d.obs {
				o.orderOK = false
			}
			b.StartTimer()
			if s := d.Snapshot(); len(s.Deltas) != 100_000 {
				b.Fatal(len(s.Deltas))
			}
		}
	})
}

// BenchmarkReconcile100k moves a 100,000-slot document to a state that
// differs in 190 field values and back, one reconcile per iteration
// ("changed"), and fills an empty document from the whole state
// ("into-empty", every slot an add).
func BenchmarkReconcile100k(b *testing.B) {
	b.Run("changed", func(b *testing.B) {
		d := bigDoc(b, 990, 0)
		states := []commit.Commit{bigDoc(b, 990, 7).Snapshot(), d.Snapshot()}
		b.ReportAllocs()
		cpu := startCPU(b)
		for i := 0; i < b.N; i++ {
			c, err := d.Reconcile(states[i%2])
			if err != nil || len(c.Deltas) == 0 {
				b.Fatal(len(c.Deltas), err)
			}
		}
		cpu.report(b, 1e6, "cpu-ms/op")
	})
	b.Run("into-empty", func(b *testing.B) {
		state := bigDoc(b, 990, 0).Snapshot()
		b.ReportAllocs()
		cpu := startCPU(b)
		for i := 0; i < b.N; i++ {
			d := New(bigID(0), commit.Object, Limits{})
			c, err := d.Reconcile(state)
			if err != nil || len(c.Deltas) != 100_000 {
				b.Fatal(len(c.Deltas), err)
			}
		}
		cpu.report(b, 1e6, "cpu-ms/op")
	})
}

// BenchmarkHeld100k reports the heap a 100,000-slot document holds, per
// slot, which is what Limits bounds.
func BenchmarkHeld100k(b *testing.B) {
	state := bigState(990, 0)
	var before, after runtime.MemStats
	for i := 0; i < b.N; i++ {
		runtime.GC()
		runtime.ReadMemStats(&before)
		d := New(bigID(0), commit.Object, Limits{})
		if _, err := d.Apply(state); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(d)
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(state.Deltas)), "heap-B/slot")
}
