package apicheck

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// scriptedGateway plays the gateway's side of one authority conversation:
// welcome, grant the claim, ask two accept questions, and hand the answers
// it gets to the test.
type scriptedGateway struct {
	v1.UnimplementedGatewayServiceServer
	answers chan *v1.Answer
}

func (g *scriptedGateway) Authority(s grpc.BidiStreamingServer[v1.AuthorityRequest, v1.AuthorityResponse]) error {
	hello, err := s.Recv()
	if err != nil {
		return err
	}
	if hello.GetHello() == nil {
		return status.Error(codes.InvalidArgument, "the first message must be hello")
	}
	if err := s.Send(&v1.AuthorityResponse{Message: &v1.AuthorityResponse_Welcome{Welcome: &v1.Welcome{
		StreamId: 1, Limits: &v1.Limits{MaxInFlight: hello.GetHello().GetMaxInFlight()},
	}}}); err != nil {
		return err
	}
	claim, err := s.Recv()
	if err != nil {
		return err
	}
	c := claim.GetClaim()
	if err := s.Send(&v1.AuthorityResponse{Message: &v1.AuthorityResponse_ClaimResult{ClaimResult: &v1.ClaimResult{
		ClaimId: c.GetClaimId(), Granted: c.GetPattern().GetPrefix() == "board:",
	}}}); err != nil {
		return err
	}
	if err := s.Send(&v1.AuthorityResponse{Message: &v1.AuthorityResponse_Questions{Questions: &v1.Questions{
		Questions: []*v1.Question{acceptQuestion(1), acceptQuestion(2)},
	}}}); err != nil {
		return err
	}
	for {
		m, err := s.Recv()
		if errors.Is(err, io.EOF) {
			close(g.answers)
			return nil
		}
		if err != nil {
			return err
		}
		for _, a := range m.GetAnswers().GetAnswers() {
			g.answers <- a
		}
	}
}

// dial serves srv on an in-memory listener and returns a client for it;
// cleanup stops both and checks that no goroutine is left behind.
func dial(t *testing.T, srv v1.GatewayServiceServer) v1.GatewayServiceClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer()
	v1.RegisterGatewayServiceServer(s, srv)
	served := make(chan error, 1)
	go func() { served <- s.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		s.Stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		goleak.VerifyNone(t)
	})
	return v1.NewGatewayServiceClient(conn)
}

// One backend conversation end to end: the generated stubs carry every
// step of the authority stream, and answers may come in any order.
func TestAuthorityConversation(t *testing.T) {
	gw := &scriptedGateway{answers: make(chan *v1.Answer, 8)}
	client := dial(t, gw)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := client.Authority(ctx)
	if err != nil {
		t.Fatal(err)
	}
	send := func(m *v1.AuthorityRequest) {
		t.Helper()
		if err := stream.Send(m); err != nil {
			t.Fatalf("send: %v", err)
		}
	}
	recv := func() *v1.AuthorityResponse {
		t.Helper()
		m, err := stream.Recv()
		if err != nil {
			t.Fatalf("recv: %v", err)
		}
		return m
	}

	send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Hello{Hello: &v1.Hello{Backend: "boards", MaxInFlight: 16}}})
	if w := recv().GetWelcome(); w.GetStreamId() != 1 || w.GetLimits().GetMaxInFlight() != 16 {
		t.Fatalf("welcome %v", w)
	}
	send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Claim{Claim: &v1.Claim{
		ClaimId: 7,
		Pattern: &v1.Pattern{Match: &v1.Pattern_Prefix{Prefix: "board:"}},
		Kinds:   []v1.QuestionKind{v1.QuestionKind_QUESTION_KIND_ACCEPT, v1.QuestionKind_QUESTION_KIND_LOAD},
	}}})
	if r := recv().GetClaimResult(); r.GetClaimId() != 7 || !r.GetGranted() {
		t.Fatalf("claim result %v", r)
	}
	qs := recv().GetQuestions().GetQuestions()
	if len(qs) != 2 || qs[0].GetAccept().GetDocument() != "board:42" {
		t.Fatalf("questions %v", qs)
	}
	if !proto.Equal(qs[1].GetAccept().GetCommit(), commitWithEveryValue()) {
		t.Fatalf("the commit changed on its way: %v", qs[1].GetAccept().GetCommit())
	}

	// Answer the second first, refusing it, then accept the first.
	refusal := &v1.Reason{Code: "read-only", Message: "viewers cannot edit", Path: path("a")}
	send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Answers{Answers: &v1.Answers{Answers: []*v1.Answer{
		{QuestionId: qs[1].GetId(), Kind: &v1.Answer_Accept{Accept: &v1.AcceptAnswer{Reasons: []*v1.Reason{refusal}}}},
		{QuestionId: qs[0].GetId(), Kind: &v1.Answer_Accept{Accept: &v1.AcceptAnswer{Accepted: true}}},
	}}}})
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after half-close: %v, want EOF", err)
	}

	var got []*v1.Answer
	for a := range gw.answers {
		got = append(got, a)
	}
	if len(got) != 2 {
		t.Fatalf("gateway got %d answers, want 2", len(got))
	}
	if got[0].GetQuestionId() != 2 || got[0].GetAccept().GetAccepted() || !proto.Equal(got[0].GetAccept().GetReasons()[0], refusal) {
		t.Errorf("first answer %v, want question 2 refused", got[0])
	}
	if got[1].GetQuestionId() != 1 || !got[1].GetAccept().GetAccepted() {
		t.Errorf("second answer %v, want question 1 accepted", got[1])
	}
}

// A method the server leaves unimplemented answers UNIMPLEMENTED, not a
// hang: the embedded Unimplemented server is what keeps a partial
// implementation compiling as the API grows.
func TestUnimplementedIsNamed(t *testing.T) {
	client := dial(t, &scriptedGateway{answers: make(chan *v1.Answer)})
	_, err := client.GetState(context.Background(), &v1.GetStateRequest{Document: "board:42"})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("GetState on a partial server: %v, want Unimplemented", err)
	}
}
