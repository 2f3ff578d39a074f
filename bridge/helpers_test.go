package bridge_test

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/gateway"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

const testToken = "s3cret-token"

// env is a gateway with the bridge as its authority, the gateway's
// WebSocket on an httptest server and the bridge's gRPC on 127.0.0.1 (or
// bufconn), and a client connection to it.
type env struct {
	t      testing.TB
	b      *bridge.Server
	gw     *gateway.Server
	ws     string
	conn   *grpc.ClientConn
	client v1.GatewayServiceClient
	dialer func(context.Context, string) (net.Conn, error) // bufconn only
}

func dialerOf(e *env) func(context.Context, string) (net.Conn, error) { return e.dialer }

type envOpts struct {
	bridge  bridge.Config
	gateway gateway.Config
	bufconn bool
	noToken bool // the client sends no token
}

func startEnv(t testing.TB, o envOpts) *env {
	t.Helper()
	bc := o.bridge
	if bc.Tokens == nil {
		bc.Tokens = []string{testToken}
	}
	b := bridge.New(bc)
	gc := o.gateway
	gc.Authority = b
	gc.Calls = b
	gc.Admission.Identifier = b
	if gc.PingInterval == 0 {
		gc.PingInterval = -1
	}
	if gc.JudgeTimeout == 0 {
		gc.JudgeTimeout = 30 * time.Second
	}
	gw, err := gateway.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	b.Attach(gw)
	hs := httptest.NewServer(gw)
	g := b.NewGRPCServer()
	var lis net.Listener
	var dialer func(context.Context, string) (net.Conn, error)
	target := ""
	if o.bufconn {
		bl := bufconn.Listen(1 << 20)
		lis = bl
		dialer = func(ctx context.Context, _ string) (net.Conn, error) { return bl.DialContext(ctx) }
		target = "passthrough:///bufnet"
	} else {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lis = l
		target = l.Addr().String()
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		g.Serve(lis)
	}()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if dialer != nil {
		opts = append(opts, grpc.WithContextDialer(dialer))
	}
	if !o.noToken {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer(testToken)))
	}
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, b: b, gw: gw, ws: "ws" + strings.TrimPrefix(hs.URL, "http"), conn: conn, client: v1.NewGatewayServiceClient(conn), dialer: dialer}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := gw.Shutdown(ctx); err != nil && !errors.Is(err, gateway.ErrClosed) {
			t.Errorf("gateway shutdown: %v", err)
		}
		if err := b.Close(ctx); err != nil {
			t.Errorf("bridge close: %v", err)
		}
		conn.Close()
		g.Stop()
		<-served
		hs.Close()
	})
	return e
}

// bearer is per-RPC credentials carrying a token over plaintext (tests).
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}
func (bearer) RequireTransportSecurity() bool { return false }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// backend is a raw authority stream over the generated client.
type backend struct {
	t       testing.TB
	stream  v1.GatewayService_AuthorityClient
	cancel  context.CancelFunc
	welcome *v1.Welcome
	sendMu  sync.Mutex
	qs      chan *v1.Question
	ctl     chan *v1.AuthorityResponse
	done    chan struct{}
	err     error // why Recv ended; read after done
}

func openBackend(t testing.TB, e *env, name string, maxInFlight uint32) *backend {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := e.client.Authority(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	b := &backend{t: t, stream: s, cancel: cancel, qs: make(chan *v1.Question, 4096), ctl: make(chan *v1.AuthorityResponse, 1024), done: make(chan struct{})}
	b.send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Hello{Hello: &v1.Hello{Backend: name, MaxInFlight: maxInFlight}}})
	go b.read()
	m := b.nextCtl()
	b.welcome = m.GetWelcome()
	if b.welcome == nil {
		t.Fatalf("first message is %v, not Welcome", m)
	}
	t.Cleanup(b.cut)
	return b
}

func (b *backend) read() {
	defer close(b.done)
	for {
		m, err := b.stream.Recv()
		if err != nil {
			b.err = err
			return
		}
		if qs := m.GetQuestions(); qs != nil {
			for _, q := range qs.Questions {
				b.qs <- q
			}
			continue
		}
		b.ctl <- m
	}
}

// cut drops the stream as a crashed backend would, and waits for its reader.
func (b *backend) cut() {
	b.cancel()
	<-b.done
}

func (b *backend) send(m *v1.AuthorityRequest) {
	b.sendMu.Lock()
	defer b.sendMu.Unlock()
	if err := b.stream.Send(m); err != nil {
		b.t.Errorf("send: %v", err)
	}
}

func (b *backend) nextCtl() *v1.AuthorityResponse {
	b.t.Helper()
	select {
	case m := <-b.ctl:
		return m
	case <-b.done:
		b.t.Fatalf("stream ended: %v", b.err)
	case <-time.After(20 * time.Second):
		b.t.Fatal("no message from the gateway")
	}
	return nil
}

func (b *backend) nextQuestion() *v1.Question {
	b.t.Helper()
	select {
	case q := <-b.qs:
		return q
	case <-b.done:
		b.t.Fatalf("stream ended: %v", b.err)
	case <-time.After(20 * time.Second):
		b.t.Fatal("no question from the gateway")
	}
	return nil
}

// sync returns once the gateway has handled everything sent before it: a
// stream's messages are handled in order, and Released answers a Release.
func (b *backend) sync() {
	b.t.Helper()
	const id = ^uint64(0)
	b.send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Release{Release: &v1.Release{ClaimId: id}}})
	for {
		if r := b.nextCtl().GetReleased(); r != nil && r.ClaimId == id {
			return
		}
	}
}

func prefix(p string) *v1.Pattern { return &v1.Pattern{Match: &v1.Pattern_Prefix{Prefix: p}} }
func exact(p string) *v1.Pattern  { return &v1.Pattern{Match: &v1.Pattern_Exact{Exact: p}} }

// claim claims pat for kinds and waits for the result.
func (b *backend) claim(id uint64, pat *v1.Pattern, timeout time.Duration, kinds ...v1.QuestionKind) *v1.ClaimResult {
	b.t.Helper()
	c := &v1.Claim{ClaimId: id, Pattern: pat, Kinds: kinds}
	if timeout > 0 {
		c.Timeout = durationpb.New(timeout)
	}
	b.send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Claim{Claim: c}})
	for {
		m := b.nextCtl()
		if r := m.GetClaimResult(); r != nil && r.ClaimId == id {
			return r
		}
	}
}

func (b *backend) mustClaim(id uint64, pat *v1.Pattern, timeout time.Duration, kinds ...v1.QuestionKind) {
	b.t.Helper()
	if r := b.claim(id, pat, timeout, kinds...); !r.Granted {
		b.t.Fatalf("claim %d refused: %v", id, r.Reasons)
	}
}

func (b *backend) answer(as ...*v1.Answer) {
	b.send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Answers{Answers: &v1.Answers{Answers: as}}})
}

func accept(qid uint64) *v1.Answer {
	return &v1.Answer{QuestionId: qid, Kind: &v1.Answer_Accept{Accept: &v1.AcceptAnswer{Accepted: true}}}
}

func refuse(qid uint64, rs ...*v1.Reason) *v1.Answer {
	return &v1.Answer{QuestionId: qid, Kind: &v1.Answer_Accept{Accept: &v1.AcceptAnswer{Reasons: rs}}}
}

// serveAccept answers every accept question with judge until ctx ends.
func (b *backend) serveAccept(ctx context.Context, judge func(q *v1.Question) *v1.Answer) {
	go func() {
		for {
			select {
			case q := <-b.qs:
				b.answer(judge(q))
			case <-b.done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
}

const (
	kAccept   = v1.QuestionKind_QUESTION_KIND_ACCEPT
	kLoad     = v1.QuestionKind_QUESTION_KIND_LOAD
	kIdentify = v1.QuestionKind_QUESTION_KIND_IDENTIFY
	kMayOpen  = v1.QuestionKind_QUESTION_KIND_MAY_OPEN
	kCall     = v1.QuestionKind_QUESTION_KIND_CALL
)

func dialPeer(t *testing.T, e *env, opts peer.Options) *peer.Peer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := peer.Dial(ctx, e.ws, opts)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func newDoc() *document.Document {
	return document.New(commit.NewID(), commit.Object, document.Limits{})
}

func set(d *peer.Doc, key string, v commit.Value) (uint64, error) {
	root, _ := d.Root()
	op := commit.Add
	d.Read(func(doc *document.Document) {
		if _, ok := doc.Get(root, commit.ObjectKey(key)); ok {
			op = commit.Replace
		}
	})
	return d.Commit(commit.Delta{Op: op, ID: root, Ref: commit.ObjectKey(key), Value: v})
}

func text(s string) commit.Value { return commit.TextValue(s) }

// nextEvent reads d's events until one of type T.
func nextEvent[T any](t *testing.T, d *peer.Doc) T {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-d.Events():
			if !ok {
				t.Fatalf("%s ended: %v", d.Name(), d.Err())
			}
			if e, ok := ev.(T); ok {
				return e
			}
		case <-timeout:
			var zero T
			t.Fatalf("%s: no %T", d.Name(), zero)
		}
	}
}

// waitCursor waits until the gateway made cursor n of name durable.
func waitCursor(t *testing.T, gw *gateway.Server, name string, n uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	reached := errors.New("reached")
	err := gw.Subscribe(ctx, name, 0, func(ev gateway.Event) error {
		if ev.Cursor >= n {
			return reached
		}
		return nil
	})
	if err != reached {
		t.Fatalf("%s never reached cursor %d: %v", name, n, err)
	}
}

func cursorOf(t *testing.T, gw *gateway.Server, name string) uint64 {
	t.Helper()
	_, _, cur, err := gw.State(ctxT(t), name)
	if err != nil {
		t.Fatalf("state of %s: %v", name, err)
	}
	return cur
}

// keysOf reads the gateway's replica of name as its root object's keys.
func keysOf(t *testing.T, e *env, name string) map[string]string {
	t.Helper()
	resp, err := e.client.GetState(ctxT(t), &v1.GetStateRequest{Document: name})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	if resp.State.Commit == nil {
		return out
	}
	for _, d := range resp.State.Commit.Deltas {
		if k := d.Ref.GetObjectKey(); k != "" || d.Ref.GetKey() != nil {
			out[k] = d.Value.GetTextValue()
		}
	}
	return out
}
