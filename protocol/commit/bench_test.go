package commit

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

// cpuNanos is the CPU time this process has used. The benchmark host is
// shared, so alongside wall-clock MB/s the benchmarks report MB/s per CPU
// second (cpu-MB/s), which load on other processes does not distort.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// reportCPU adds cpu-MB/s for n ops of size bytes that used cpu nanoseconds.
func reportCPU(b *testing.B, size int, cpu int64) {
	if cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/(float64(cpu)/1e9)/1e6, "cpu-MB/s")
	}
}

// editingStream is a stream of small commits shaped like editing: one to
// four deltas each, short object keys, short text, numbers, the odd array
// insert and attach reference.
func editingStream(n int) []Commit {
	rng := rand.New(rand.NewPCG(13, 14))
	out := make([]Commit, n)
	for i := range out {
		var c Commit
		for j := range 1 + rng.IntN(4) {
			d := Delta{Op: Op(rng.IntN(2)), ID: ID{10: byte(rng.IntN(50)), 11: byte(j)}}
			switch rng.IntN(4) {
			case 0:
				p, _ := Between([]byte{byte(1 + rng.IntN(200))}, nil)
				d.Ref = ArrayKey(p)
			default:
				d.Ref = ObjectKey(fmt.Sprintf("field%d", rng.IntN(20)))
			}
			switch rng.IntN(5) {
			case 0:
				d.Value = IntValue(rng.Int64N(100000))
			case 1:
				d.Value = FloatValue(rng.Float64())
			case 2:
				d.Value = RefTo(Reference{Edge: Attach, Kind: Object, ID: NewID()})
			default:
				d.Value = TextValue(randText(rng, 12))
			}
			c.Deltas = append(c.Deltas, d)
		}
		out[i] = c
	}
	return out
}

func encodedStream(b *testing.B, cs []Commit) ([][]byte, int, int) {
	var bs [][]byte
	size, deltas := 0, 0
	for _, c := range cs {
		e, err := Encode(c)
		if err != nil {
			b.Fatal(err)
		}
		bs = append(bs, e)
		size += len(e)
		deltas += len(c.Deltas)
	}
	return bs, size, deltas
}

// BenchmarkDecode decodes and validates a stream of 1,000 small commits per
// op; MB/s is over the encoded bytes.
func BenchmarkDecode(b *testing.B) {
	bs, size, deltas := encodedStream(b, editingStream(1000))
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu := cpuNanos()
	for b.Loop() {
		for _, e := range bs {
			if _, err := Decode(e); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportCPU(b, size, cpuNanos()-cpu)
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N*deltas), "allocs/delta")
	b.ReportMetric(float64(size)/float64(len(bs)), "bytes/commit")
}

// BenchmarkDecodeLarge decodes one commit of 5,000 deltas.
func BenchmarkDecodeLarge(b *testing.B) {
	var c Commit
	for _, s := range editingStream(8000) {
		c.Deltas = append(c.Deltas, s.Deltas...)
	}
	c.Deltas = dedupe(c.Deltas)[:5000]
	e, err := Encode(c)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(e)))
	b.ReportAllocs()
	cpu := cpuNanos()
	for b.Loop() {
		if _, err := Decode(e); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, len(e), cpuNanos()-cpu)
}

func dedupe(ds []Delta) []Delta {
	seen := map[[2]string]bool{}
	var out []Delta
	for _, d := range ds {
		k := [2]string{string(d.ID[:]), string(rune(d.Ref.Kind)) + d.Ref.Key}
		if !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out
}

// BenchmarkEncode encodes the same stream into a reused buffer, from
// canonical order (as decoded) and from shuffled order (sorting first).
func BenchmarkEncode(b *testing.B) {
	cs := editingStream(1000)
	_, size, _ := encodedStream(b, cs)
	sorted := make([]Commit, len(cs))
	for i, c := range cs {
		e, _ := Encode(c)
		sorted[i], _ = Decode(e)
	}
	rng := rand.New(rand.NewPCG(15, 16))
	for i := range cs {
		rng.Shuffle(len(cs[i].Deltas), func(x, y int) { cs[i].Deltas[x], cs[i].Deltas[y] = cs[i].Deltas[y], cs[i].Deltas[x] })
	}
	for _, run := range []struct {
		name string
		cs   []Commit
	}{{"canonical", sorted}, {"shuffled", cs}} {
		b.Run(run.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			buf := make([]byte, 0, 4096)
			cpu := cpuNanos()
			for b.Loop() {
				for _, c := range run.cs {
					var err error
					if buf, err = AppendEncode(buf[:0], c); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportCPU(b, size, cpuNanos()-cpu)
		})
	}
}

// BenchmarkDecodeFxamacker is a yardstick, not a rival: fxamacker/cbor
// reading the same stream into generic values, without any of the format's
// checks, on the same host.
func BenchmarkDecodeFxamacker(b *testing.B) {
	bs, size, _ := encodedStream(b, editingStream(1000))
	b.SetBytes(int64(size))
	b.ReportAllocs()
	cpu := cpuNanos()
	for b.Loop() {
		for _, e := range bs {
			var v any
			if err := cbor.Unmarshal(e, &v); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportCPU(b, size, cpuNanos()-cpu)
}

// BenchmarkHostByteLoop only sums the stream's bytes: a measure of the host,
// so figures from different machines can be compared.
func BenchmarkHostByteLoop(b *testing.B) {
	bs, size, _ := encodedStream(b, editingStream(1000))
	b.SetBytes(int64(size))
	sum := 0
	for b.Loop() {
		for _, e := range bs {
			for _, c := range e {
				sum += int(c)
			}
		}
	}
	if sum == 0 {
		b.Fatal("no bytes")
	}
}
