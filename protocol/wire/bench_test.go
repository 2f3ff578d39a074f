package wire

import (
	"testing"
)

// BenchmarkScan scans a commit-shaped value of small items.
func BenchmarkScan(b *testing.B) {
	buf := AppendArray(nil, 1)
	buf = AppendArray(buf, 200)
	for i := range 200 {
		buf = AppendArray(buf, 4)
		buf = AppendUint(buf, 0)
		buf = AppendBytes(buf, make([]byte, 12))
		buf = AppendArray(buf, 2)
		buf = AppendUint(buf, 0)
		buf = AppendText(buf, "field")
		buf = AppendInt(buf, int64(i*1000))
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Scan(buf); err != nil {
			b.Fatal(err)
		}
	}
}
