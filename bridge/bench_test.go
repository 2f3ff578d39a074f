package bridge_test

import (
	"context"
	"sync"
	"testing"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/gateway"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol/commit"
)

func benchRequest() *gateway.AcceptRequest {
	root := commit.NewID()
	c := commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root, Ref: commit.ObjectKey("title"), Value: commit.TextValue("hello")}}}
	bs, _ := commit.Encode(c)
	return &gateway.AcceptRequest{Document: "d", Origin: link, Commit: c, Bytes: bs, Paths: [][]string{{"title"}}}
}

// BenchmarkJudgeNoClaimant is the hub goroutine's cost for a commit nobody
// claims: the standalone gateway with the bridge plugged in.
func BenchmarkJudgeNoClaimant(b *testing.B) {
	br := bridge.New(bridge.Config{})
	req := benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		br.Judge(req, func(gateway.Verdict) {})
	}
}

// BenchmarkAcceptRoundTrip is one accept question over an authority stream
// (bufconn) and its answer, with up to 64 in flight, in each commit view.
func BenchmarkAcceptRoundTrip(b *testing.B) {
	for _, view := range []v1.CommitView{v1.CommitView_COMMIT_VIEW_FULL, v1.CommitView_COMMIT_VIEW_ENCODED} {
		b.Run(view.String(), func(b *testing.B) {
			e := startEnv(b, envOpts{bufconn: true})
			a := openBackend(b, e, "bench", 256)
			if r := a.claimView(1, prefix(""), 0, view); !r.Granted {
				b.Fatalf("claim refused: %v", r.Reasons)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			a.serveAccept(ctx, func(q *v1.Question) *v1.Answer { return accept(q.Id) })
			req := benchRequest()
			sem := make(chan struct{}, 64)
			var wg sync.WaitGroup
			b.ReportAllocs()
			for b.Loop() {
				sem <- struct{}{}
				wg.Add(1)
				e.b.Judge(req, func(v gateway.Verdict) {
					if !v.Accepted() {
						b.Errorf("refused: %+v", v)
					}
					<-sem
					wg.Done()
				})
			}
			wg.Wait()
		})
	}
}
