package link

import (
	"fmt"
	"testing"

	"github.com/weftgate/weftgate/protocol/frame"
)

// BenchmarkLinkStep measures commits through one live topic of one link:
// a commits frame from the peer reported as events, and as many commits
// sent and batched into frames, per round. batch is commits per frame and
// per flush; 1 is a flush after every commit.
func BenchmarkLinkStep(b *testing.B) {
	for _, batch := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			l := New(Config{})
			topic, err := l.Share("doc", &frame.Root{ID: [12]byte{1}}, false)
			if err != nil {
				b.Fatal(err)
			}
			l.Receive(frame.Frame{Kind: frame.Open, Topic: 1, Name: "doc", Root: &frame.Root{ID: [12]byte{1}}})
			l.Flush()
			l.Events()
			c := make([]byte, 60) // a small real commit is about this size
			in := frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: make([][]byte, batch)}
			for i := range in.Commits {
				in.Commits[i] = c
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				l.Receive(in)
				in.First += uint64(batch)
				for range batch {
					if _, err := l.Send(topic, c, nil); err != nil {
						b.Fatal(err)
					}
				}
				out := l.Flush()
				if len(out) != 1 || len(l.Events()) != batch {
					b.Fatal("a round did not make one frame and a batch of events")
				}
				l.Recycle(out) // as the gateway does once it wrote them
			}
			b.ReportMetric(float64(2*batch*b.N)/b.Elapsed().Seconds(), "commits/s")
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*batch*b.N), "ns/commit")
		})
	}
}
