package client_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/bridge/client"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol/commit"
)

// BenchmarkAcceptRoundTrip is the SDK's share of an accept question: the
// fake gateway sends questions in batches of 64 over bufconn, in the
// encoded view the SDK claims with; the SDK decodes each commit, runs the
// handler and batches the answers back.
func BenchmarkAcceptRoundTrip(b *testing.B) {
	b.Run("goroutine", func(b *testing.B) { benchAccept(b, false) })
	b.Run("inline", func(b *testing.B) { benchAccept(b, true) })
}

func benchAccept(b *testing.B, inline bool) {
	g := newFake(b, "")
	c := g.dial(b, g.options())
	done := claimAsync(c, client.Prefix(""), client.Handlers{Accept: refuseAdmin, InlineAccept: inline})
	fs := g.stream(b)
	fs.welcome(b, 1, nil)
	cl := fs.grant(b)
	wait(b, done, "claim")
	cm := commit.Commit{Deltas: []commit.Delta{set("title", "hello"), set("body", "a short text")}}
	q := acceptQ(b, 0, cl.GetClaimId(), "d", cm)
	q.GetAccept().Commit = encodedView(b, cm)
	const batch = 64
	next, msgs := uint64(0), 0
	b.ReportAllocs()
	b.ResetTimer()
	for sent := 0; sent < b.N; {
		n := min(batch, b.N-sent)
		qs := make([]*v1.Question, n)
		for i := range qs {
			next++
			qs[i] = &v1.Question{Id: next, ClaimId: q.ClaimId, Attempt: 1, Timeout: q.Timeout, Kind: q.Kind}
		}
		fs.ask(b, qs...)
		for got := 0; got < n; {
			got += len(fs.must(b).GetAnswers().GetAnswers())
			msgs++
		}
		sent += n
	}
	b.ReportMetric(float64(b.N)/float64(msgs), "answers/msg")
}

// BenchmarkSubscribeReplay is the SDK's cost per commit event: a backlog
// replayed over bufconn, each event's cursor checked, its commit decoded
// and checked against the typed view, and handed to the callback.
func BenchmarkSubscribeReplay(b *testing.B) {
	g := newFake(b, "")
	c := g.dial(b, g.options())
	seed(b, g, "d", b.N)
	stop := errors.New("done")
	b.ReportAllocs()
	b.ResetTimer()
	err := c.Subscribe(context.Background(), "d", 0, func(ev client.Event) error {
		if ev.Kind == client.CaughtUpEvent {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		b.Fatal(err)
	}
}

// BenchmarkE2EJudgedWrite is one unary WriteCommit through a real gateway
// and bridge on 127.0.0.1, judged by this client's own accept claim: two
// gRPC round trips, the apply and the (in-memory) store.
func BenchmarkE2EJudgedWrite(b *testing.B) {
	lc, err := startLocal(bridge.Config{}, gatewayConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer lc.stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, lc.addr, client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Claim(ctx, client.Prefix(""), client.Handlers{Accept: refuseAdmin}); err != nil {
		b.Fatal(err)
	}
	root := commit.NewID()
	opts := client.WriteOptions{CreateRoot: &client.Root{ID: root, Kind: commit.Object}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		op := commit.Replace
		if i == 0 {
			op = commit.Add
		}
		d := commit.Delta{Op: op, ID: root, Ref: commit.ObjectKey("n"), Value: commit.TextValue(fmt.Sprint(i))}
		r, err := c.WriteCommit(ctx, "bench", commit.Commit{Deltas: []commit.Delta{d}}, opts)
		if err != nil || r.Status != client.WriteApplied {
			b.Fatalf("write %d: %+v, %v", i, r, err)
		}
	}
}
