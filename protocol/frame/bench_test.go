package frame_test

import (
	"testing"

	"github.com/weftgate/weftgate/protocol/frame"
)

// benchFrame is a commits frame of 32 small commits, the shape a busy
// document fans out in one flush.
func benchFrame(b *testing.B) (frame.Frame, []byte) {
	f := frame.Frame{Kind: frame.Commits, Topic: 3, First: 1000}
	for range 32 {
		f.Commits = append(f.Commits, aCommit)
	}
	enc, err := frame.Encode(f)
	if err != nil {
		b.Fatal(err)
	}
	return f, enc
}

func BenchmarkDecodeCommits(b *testing.B) {
	_, enc := benchFrame(b)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := frame.Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeCommits(b *testing.B) {
	f, enc := benchFrame(b)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := frame.Encode(f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendCommits(b *testing.B) {
	f, enc := benchFrame(b)
	dst := make([]byte, 0, len(enc))
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if dst, err = frame.Append(dst[:0], f); err != nil {
			b.Fatal(err)
		}
	}
}
