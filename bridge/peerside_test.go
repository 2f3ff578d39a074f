package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/weftgate/weftgate/bridge"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/frame"
)

// An identify authority refusing a peer makes its handshake fail with 401
// and the backend's reason; one admitting it lets the socket open.
func TestIdentifyThroughTheAuthority(t *testing.T) {
	e := startEnv(t, envOpts{})
	a := openBackend(t, e, "auth", 0)
	a.mustClaim(1, prefix("/"), 0, kIdentify)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.serveAccept(ctx, func(q *v1.Question) *v1.Answer {
		h := q.GetIdentify().GetHandshake()
		for _, hd := range h.Headers {
			if hd.Name == "cookie" && strings.Contains(strings.Join(hd.Values, ";"), "session=good") {
				return &v1.Answer{QuestionId: q.Id, Kind: &v1.Answer_Identify{Identify: &v1.IdentifyAnswer{Admitted: true, Identity: &v1.Identity{Id: "ann"}}}}
			}
		}
		return &v1.Answer{QuestionId: q.Id, Kind: &v1.Answer_Identify{Identify: &v1.IdentifyAnswer{Reasons: []*v1.Reason{{Code: "no-session", Message: "sign in"}}}}}
	})
	_, err := peer.Dial(ctxT(t), e.ws, peer.Options{})
	var he *peer.HandshakeError
	if !errors.As(err, &he) || he.StatusCode != http.StatusUnauthorized || !strings.Contains(string(he.Body), "no-session") {
		t.Fatalf("dial: %v, want 401 no-session", err)
	}
	p, err := peer.Dial(ctxT(t), e.ws, peer.Options{Header: http.Header{"Cookie": {"session=good"}}})
	if err != nil {
		t.Fatalf("dial with a session: %v", err)
	}
	p.Close()
}

// An identify backend that does not answer in time, under the closed
// policy, makes the handshake fail with 503 and authority-timeout: retry,
// not "who are you".
func TestIdentifyTimeoutUnderClosedIs503(t *testing.T) {
	e := startEnv(t, envOpts{bridge: bridge.Config{Policy: bridge.PolicyClosed}})
	a := openBackend(t, e, "auth", 0)
	a.mustClaim(1, prefix("/"), 50*time.Millisecond, kIdentify)
	_, err := peer.Dial(ctxT(t), e.ws, peer.Options{})
	var he *peer.HandshakeError
	if !errors.As(err, &he) || he.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(he.Body), "authority-timeout") {
		t.Fatalf("dial: %v, want 503 authority-timeout", err)
	}
}

// A request-channel call is answered by the backend that claims its name,
// progress first; a name nobody claims is answered missing.
func TestCallAnsweredByTheBackend(t *testing.T) {
	e := startEnv(t, envOpts{})
	a := openBackend(t, e, "calls", 0)
	a.mustClaim(1, exact("echo"), 0, kCall)
	ws, _, err := websocket.Dial(ctxT(t), e.ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if err := ws.Write(ctxT(t), websocket.MessageText, []byte(`{"id":1,"name":"echo","args":{"x":1}}`)); err != nil {
		t.Fatal(err)
	}
	q := a.nextQuestion()
	c := q.GetCall()
	if c == nil || c.Name != "echo" || c.ArgsJson != `{"x":1}` || c.RequestId != 1 || !c.Peer.GetIdentity().GetAnonymous() {
		t.Fatalf("question %v", q)
	}
	a.answer(&v1.Answer{QuestionId: q.Id, Kind: &v1.Answer_CallProgress{CallProgress: &v1.CallProgress{ProgressJson: `"half"`}}})
	a.answer(&v1.Answer{QuestionId: q.Id, Kind: &v1.Answer_Call{Call: &v1.CallAnswer{Outcome: &v1.CallAnswer_ResultJson{ResultJson: `{"x":1}`}}}})
	for _, want := range []string{`{"id":1,"progress":"half"}`, `{"id":1,"result":{"x":1}}`} {
		if got := readText(t, ws); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	if err := ws.Write(ctxT(t), websocket.MessageText, []byte(`{"id":2,"name":"other","args":null}`)); err != nil {
		t.Fatal(err)
	}
	var m struct {
		ID    int64
		Error struct{ Reason string }
	}
	if err := json.Unmarshal([]byte(readText(t, ws)), &m); err != nil || m.ID != 2 || m.Error.Reason != "missing" {
		t.Fatalf("%+v %v, want missing", m, err)
	}
	// A refusal crosses with its reasons.
	if err := ws.Write(ctxT(t), websocket.MessageText, []byte(`{"id":3,"name":"echo"}`)); err != nil {
		t.Fatal(err)
	}
	q = a.nextQuestion()
	a.answer(&v1.Answer{QuestionId: q.Id, Kind: &v1.Answer_Call{Call: &v1.CallAnswer{Outcome: &v1.CallAnswer_Error{Error: &v1.CallError{Reason: "refused", Reasons: []*v1.Reason{{Code: "quota"}}}}}}})
	if got := readText(t, ws); !strings.Contains(got, `"reason":"refused"`) || !strings.Contains(got, `"quota"`) {
		t.Fatalf("got %s, want refused with quota", got)
	}
	// So does a failure the backend wrote for the client.
	if err := ws.Write(ctxT(t), websocket.MessageText, []byte(`{"id":4,"name":"echo"}`)); err != nil {
		t.Fatal(err)
	}
	q = a.nextQuestion()
	a.answer(&v1.Answer{QuestionId: q.Id, Kind: &v1.Answer_Call{Call: &v1.CallAnswer{Outcome: &v1.CallAnswer_Error{Error: &v1.CallError{Reason: "failed", Message: "try tomorrow", Reasons: []*v1.Reason{{Code: "maintenance", Message: "until 6"}}}}}}})
	if got, want := readText(t, ws), `{"id":4,"error":{"reason":"failed","message":"try tomorrow","reasons":[{"code":"maintenance","message":"until 6"}]}}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func readText(t *testing.T, ws *websocket.Conn) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		typ, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if typ == websocket.MessageText {
			return string(b)
		}
	}
}

// Without the token every call is Unauthenticated and says nothing more;
// health answers without one.
func TestAuthAndHealth(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true, noToken: true})
	ctx := ctxT(t)
	_, err := e.client.GetState(ctx, &v1.GetStateRequest{Document: "d"})
	if status.Code(err) != codes.Unauthenticated || status.Convert(err).Message() != "unauthenticated" {
		t.Fatalf("GetState: %v", err)
	}
	s, err := e.client.Authority(ctx)
	if err == nil {
		_, err = s.Recv()
	}
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("Authority: %v", err)
	}
	wrong, err := grpc.NewClient(e.conn.Target(), grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithContextDialer(dialerOf(e)), grpc.WithPerRPCCredentials(bearer("wrong")))
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.Close()
	if _, err := v1.NewGatewayServiceClient(wrong).GetState(ctx, &v1.GetStateRequest{Document: "d"}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("wrong token: %v", err)
	}
	h, err := healthpb.NewHealthClient(e.conn).Check(ctx, &healthpb.HealthCheckRequest{Service: v1.GatewayService_ServiceDesc.ServiceName})
	if err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health %v %v", h, err)
	}
	_ = bridge.PolicyOpen
}

// Hello must come first, once.
func TestHelloFirst(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true})
	for name, first := range map[string]*v1.AuthorityRequest{
		"claim":      {Message: &v1.AuthorityRequest_Claim{Claim: &v1.Claim{ClaimId: 1}}},
		"unset":      {},
		"no backend": {Message: &v1.AuthorityRequest_Hello{Hello: &v1.Hello{}}},
	} {
		s, err := e.client.Authority(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(first); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); status.Code(err) != codes.InvalidArgument {
			t.Fatalf("%s: %v, want InvalidArgument", name, err)
		}
	}
	b := openBackend(t, e, "twice", 0)
	b.send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Hello{Hello: &v1.Hello{Backend: "again"}}})
	<-b.done
	if status.Code(b.err) != codes.InvalidArgument {
		t.Fatalf("second Hello: %v", b.err)
	}
}

// Every question about one connection names it alike: the identify
// question's handshake carries the connection id the peer then has, and
// the load its open needs and the calls it makes carry that id, its
// address and the identity the identify answer gave.
func TestQuestionsNameTheConnection(t *testing.T) {
	e := startEnv(t, envOpts{})
	a := openBackend(t, e, "auth", 0)
	a.mustClaim(1, prefix("/"), 0, kIdentify)
	a.mustClaim(2, prefix(""), 0, kLoad)
	a.mustClaim(3, exact("who"), 0, kCall)
	asked := make(chan *v1.Question, 8)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.serveAccept(ctx, func(q *v1.Question) *v1.Answer {
		asked <- q
		switch {
		case q.GetIdentify() != nil:
			return &v1.Answer{QuestionId: q.Id, Kind: &v1.Answer_Identify{Identify: &v1.IdentifyAnswer{Admitted: true, Identity: &v1.Identity{Id: "ann"}}}}
		case q.GetLoad() != nil:
			return &v1.Answer{QuestionId: q.Id, Kind: &v1.Answer_Load{Load: &v1.LoadAnswer{}}}
		}
		return &v1.Answer{QuestionId: q.Id, Kind: &v1.Answer_Call{Call: &v1.CallAnswer{Outcome: &v1.CallAnswer_ResultJson{ResultJson: `"ok"`}}}}
	})
	ws, _, err := websocket.Dial(ctxT(t), e.ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	open, err := frame.Encode(frame.Frame{Kind: frame.Open, Topic: 1, Name: "doc", Want: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(ctxT(t), websocket.MessageBinary, open); err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(ctxT(t), websocket.MessageText, []byte(`{"id":1,"name":"who"}`)); err != nil {
		t.Fatal(err)
	}
	if got := readText(t, ws); got != `{"id":1,"result":"ok"}` {
		t.Fatalf("call answered %s", got)
	}
	var hs *v1.Handshake
	var peers []*v1.Peer
	for hs == nil || len(peers) < 2 {
		select {
		case q := <-asked:
			switch {
			case q.GetIdentify() != nil:
				hs = q.GetIdentify().GetHandshake()
			case q.GetLoad() != nil:
				peers = append(peers, q.GetLoad().GetPeer())
			case q.GetCall() != nil:
				peers = append(peers, q.GetCall().GetPeer())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("asked identify %v, then %d of load and call", hs, len(peers))
		}
	}
	links := e.gw.Status(ctxT(t)).Links
	if len(links) != 1 || hs.GetConnectionId() == 0 || links[0].ID != "c"+strconv.FormatUint(hs.GetConnectionId(), 10) {
		t.Fatalf("handshake named connection %d, the gateway has links %+v", hs.GetConnectionId(), links)
	}
	for _, p := range peers {
		if p.GetConnectionId() != hs.GetConnectionId() || p.GetRemoteAddr() != "127.0.0.1" || p.GetIdentity().GetId() != "ann" {
			t.Fatalf("peer %v: want connection %d, address 127.0.0.1 and identity ann", p, hs.GetConnectionId())
		}
	}
}
