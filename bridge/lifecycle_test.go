package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/gateway/requests"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol/commit"
)

// Half-closing is the graceful exit: claims end at once, the unanswered
// question goes to the policy, the write already sent is still
// acknowledged, then the stream ends with OK.
func TestHalfCloseIsGraceful(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true, bridge: bridge.Config{Policy: bridge.PolicyClosed, Fallback: []bridge.FallbackRule{{Prefix: "w", Policy: bridge.PolicyOpen}}}})
	a := openBackend(t, e, "a", 0)
	a.mustClaim(1, prefix("q"), 0, kAccept)
	v := judge(e.b, "q1", link)
	a.nextQuestion()
	root := commit.NewID()
	a.send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Write{Write: &v1.Write{WriteId: 1, Change: &v1.Write_Commit{Commit: &v1.CommitWrite{
		Document: "w", Commit: addText(root, "k", "v"), CreateRoot: &v1.Root{Id: pid(root), Kind: v1.Kind_KIND_OBJECT},
	}}}}})
	if err := a.stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if got := verdictOf(t, v); code(got) != string(bridge.ReasonAuthorityTimeout) {
		t.Fatalf("%+v, want authority-timeout", got)
	}
	var acked bool
	for m := range drain(a) {
		if ack := m.GetWriteAck(); ack != nil && ack.WriteId == 1 && ack.Result.Status == v1.WriteStatus_WRITE_STATUS_APPLIED {
			acked = true
		}
	}
	if !acked || !errors.Is(a.err, io.EOF) {
		t.Fatalf("acked %v, end %v; want the ack then OK", acked, a.err)
	}
}

// drain yields a backend's control messages until its stream ends.
func drain(b *backend) <-chan *v1.AuthorityResponse {
	out := make(chan *v1.AuthorityResponse)
	go func() {
		defer close(out)
		for {
			select {
			case m := <-b.ctl:
				out <- m
			case <-b.done:
				for {
					select {
					case m := <-b.ctl:
						out <- m
					default:
						return
					}
				}
			}
		}
	}()
	return out
}

// Close ends every authority stream with UNAVAILABLE, answers what was in
// flight by the policy, and turns health to NOT_SERVING.
func TestCloseEndsStreams(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true, bridge: bridge.Config{Policy: bridge.PolicyClosed}})
	a := openBackend(t, e, "a", 0)
	a.mustClaim(1, prefix(""), 0, kAccept)
	v := judge(e.b, "d", link)
	a.nextQuestion()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := verdictOf(t, v); code(got) == "" {
		t.Fatalf("%+v: closed accepted without a verdict", got)
	}
	<-a.done
	if status.Code(a.err) != codes.Unavailable {
		t.Fatalf("stream ended %v, want Unavailable", a.err)
	}
	if got := verdictOf(t, judge(e.b, "d", link)); code(got) != string(bridge.ReasonAuthorityGone) {
		t.Fatalf("after close: %+v", got)
	}
	h, err := healthpb.NewHealthClient(e.conn).Check(ctxT(t), &healthpb.HealthCheckRequest{})
	if err != nil || h.Status != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health %v %v", h, err)
	}
}

// A backend that does not read its stream is ended RESOURCE_EXHAUSTED once
// its send queue is full; its questions move on.
func TestUnreadStreamIsEnded(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true, bridge: bridge.Config{MaxSendQueue: 4}})
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	s, err := e.client.Authority(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Hello{Hello: &v1.Hello{Backend: "deaf"}}}); err != nil {
		t.Fatal(err)
	}
	// Every Release is answered; nobody reads the answers. Once gRPC's flow
	// control stops the sender, the queue fills and the stream ends.
	const most = 1 << 20
	for i := range most {
		if err := s.Send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Release{Release: &v1.Release{ClaimId: uint64(i)}}}); err != nil {
			break
		}
	}
	for {
		if _, err := s.Recv(); err != nil {
			if status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("ended %v, want ResourceExhausted", err)
			}
			return
		}
	}
}

// A call's progress restarts its timeout; silence past it fails the call.
func TestCallProgressRestartsTimeout(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true})
	a := openBackend(t, e, "a", 0)
	a.mustClaim(1, exact("slow"), 200*time.Millisecond, kCall)
	got := make(chan string, 16)
	done := make(chan error, 1)
	go func() {
		_, err := e.b.Call(context.Background(), callOf("slow"), func(p json.RawMessage) { got <- string(p) })
		done <- err
	}()
	q := a.nextQuestion()
	for i := range 3 {
		a.answer(&v1.Answer{QuestionId: q.Id, Kind: &v1.Answer_CallProgress{CallProgress: &v1.CallProgress{ProgressJson: "1"}}})
		if p := <-got; p != "1" {
			t.Fatalf("progress %d: %s", i, p)
		}
	}
	a.answer(&v1.Answer{QuestionId: q.Id, Kind: &v1.Answer_Call{Call: &v1.CallAnswer{Outcome: &v1.CallAnswer_ResultJson{ResultJson: "true"}}}})
	if err := <-done; err != nil {
		t.Fatalf("call: %v", err)
	}
	go func() {
		_, err := e.b.Call(context.Background(), callOf("slow"), func(json.RawMessage) {})
		done <- err
	}()
	a.nextQuestion()
	var f *requests.Failure
	if err := <-done; !errors.As(err, &f) || len(f.Reasons) != 1 || f.Reasons[0].Code != string(bridge.ReasonAuthorityTimeout) {
		t.Fatalf("a silent call: %v, want failed with authority-timeout", err)
	}
	if w := a.nextCtl().GetWithdrawn(); w == nil || w.Reason != v1.WithdrawReason_WITHDRAW_REASON_TIMEOUT {
		t.Fatalf("withdrawn %v", w)
	}
}

func callOf(name string) requests.Call {
	return requests.Call{ID: 1, Name: name, Args: []byte("null"), Caller: requests.Caller{Identity: admission.Identity{Anonymous: true}}}
}
