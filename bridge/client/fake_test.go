package client_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/weftgate/weftgate/bridge/client"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// guard bounds every wait in these tests: a wait that passes it is a
// failure, never a way to synchronise.
const guard = 10 * time.Second

// fakeGateway serves GatewayService over bufconn. Authority streams are
// handed to the test to script; Subscribe serves an in-memory commit log
// with retention, resume and snapshots; unary calls run the test's funcs.
type fakeGateway struct {
	v1.UnimplementedGatewayServiceServer
	t   testing.TB
	lis *bufconn.Listener
	srv *grpc.Server

	token   string // when set, every call must carry it
	streams chan *fakeStream

	mu      sync.Mutex
	docs    map[string]*fakeDoc
	subs    map[*fakeSub]struct{}
	subReqs chan *v1.SubscribeRequest
	skew    int64 // added to resume cursors: a misbehaving gateway

	getState     func(context.Context, *v1.GetStateRequest) (*v1.GetStateResponse, error)
	writeCommit  func(context.Context, *v1.WriteCommitRequest) (*v1.WriteCommitResponse, error)
	replaceState func(context.Context, *v1.ReplaceStateRequest) (*v1.ReplaceStateResponse, error)
	list         func(context.Context, *v1.ListDocumentsRequest) (*v1.ListDocumentsResponse, error)
}

type fakeDoc struct {
	events []*v1.CommitEvent // events[i] has cursor i+1
	floor  uint64            // commits at or below it are no longer retained
	state  *v1.DocumentState // the snapshot served, at len(events)
}

type fakeSub struct {
	req  *v1.SubscribeRequest
	live chan *v1.SubscribeResponse
	kill chan error
}

func newFake(t testing.TB, token string) *fakeGateway {
	g := &fakeGateway{t: t, lis: bufconn.Listen(1 << 20), token: token,
		streams: make(chan *fakeStream, 16), docs: map[string]*fakeDoc{}, subs: map[*fakeSub]struct{}{},
		subReqs: make(chan *v1.SubscribeRequest, 64)}
	g.srv = grpc.NewServer(grpc.WaitForHandlers(true),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := g.auth(ctx); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := g.auth(ss.Context()); err != nil {
				return err
			}
			return h(srv, ss)
		}))
	v1.RegisterGatewayServiceServer(g.srv, g)
	go g.srv.Serve(g.lis)
	t.Cleanup(g.srv.Stop)
	return g
}

func (g *fakeGateway) auth(ctx context.Context) error {
	if g.token == "" {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer "+g.token {
		return status.Error(codes.Unauthenticated, "bad token")
	}
	return nil
}

// options dial the fake; the backoff waits nothing unless a test says so.
func (g *fakeGateway) options() client.Options {
	return client.Options{
		Backend: "test",
		Backoff: zeroBackoff{},
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return g.lis.DialContext(ctx)
		})},
	}
}

func (g *fakeGateway) dial(t testing.TB, o client.Options) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	c, err := client.Dial(ctx, "passthrough:///bufnet", o)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

type zeroBackoff struct{}

func (zeroBackoff) Delay(int) time.Duration { return 0 }

// stepClock hands each backoff wait to the test, which fires it.
type stepClock struct{ waits chan stepWait }

type stepWait struct {
	d    time.Duration
	fire chan time.Time
}

func newStepClock() *stepClock { return &stepClock{waits: make(chan stepWait, 16)} }

func (c *stepClock) After(d time.Duration) <-chan time.Time {
	w := stepWait{d: d, fire: make(chan time.Time, 1)}
	c.waits <- w
	return w.fire
}

func (c *stepClock) next(t testing.TB) stepWait {
	t.Helper()
	select {
	case w := <-c.waits:
		return w
	case <-time.After(guard):
		t.Fatal("no backoff wait came")
		return stepWait{}
	}
}

// recordingBackoff reports each failure count it is asked about.
type recordingBackoff struct{ asked chan int }

func (b recordingBackoff) Delay(n int) time.Duration {
	b.asked <- n
	return time.Duration(n) * time.Millisecond
}

// fakeStream is one authority stream, scripted by the test.
type fakeStream struct {
	st   v1.GatewayService_AuthorityServer
	in   chan *v1.AuthorityRequest // closed when the client half-closes or goes
	end  chan error
	gone chan struct{} // closed when the handler returned
	half chan struct{} // closed when the client half-closed or went
}

func (g *fakeGateway) Authority(st v1.GatewayService_AuthorityServer) error {
	fs := &fakeStream{st: st, in: make(chan *v1.AuthorityRequest, 256), end: make(chan error, 1),
		gone: make(chan struct{}), half: make(chan struct{})}
	defer close(fs.gone)
	go func() {
		defer close(fs.half)
		defer close(fs.in)
		for {
			m, err := st.Recv()
			if err != nil {
				return
			}
			select {
			case fs.in <- m:
			case <-fs.gone:
				return
			}
		}
	}()
	g.streams <- fs
	select {
	case err := <-fs.end:
		return err
	case <-fs.half: // as the gateway does: a half-close ends the stream with OK
		return nil
	case <-st.Context().Done():
		return st.Context().Err()
	}
}

func (g *fakeGateway) stream(t testing.TB) *fakeStream {
	t.Helper()
	select {
	case fs := <-g.streams:
		return fs
	case <-time.After(guard):
		t.Fatal("no authority stream opened")
		return nil
	}
}

// next is the client's next message; ok is false when it half-closed.
func (fs *fakeStream) next(t testing.TB) (*v1.AuthorityRequest, bool) {
	t.Helper()
	select {
	case m, ok := <-fs.in:
		return m, ok
	case <-time.After(guard):
		t.Fatal("the client sent nothing")
		return nil, false
	}
}

func (fs *fakeStream) must(t testing.TB) *v1.AuthorityRequest {
	t.Helper()
	m, ok := fs.next(t)
	if !ok {
		t.Fatal("the client half-closed")
	}
	return m
}

func (fs *fakeStream) send(t testing.TB, m *v1.AuthorityResponse) {
	t.Helper()
	if err := fs.st.Send(m); err != nil {
		t.Fatalf("send: %v", err)
	}
}

// welcome reads Hello and answers it.
func (fs *fakeStream) welcome(t testing.TB, streamID uint64, l *v1.Limits) *v1.Hello {
	t.Helper()
	h := fs.must(t).GetHello()
	if h == nil {
		t.Fatal("the first message is not Hello")
	}
	fs.send(t, &v1.AuthorityResponse{Message: &v1.AuthorityResponse_Welcome{Welcome: &v1.Welcome{StreamId: streamID, Node: "fake", Limits: l}}})
	return h
}

// claim reads one Claim and grants it.
func (fs *fakeStream) grant(t testing.TB) *v1.Claim {
	t.Helper()
	cl := fs.must(t).GetClaim()
	if cl == nil {
		t.Fatal("expected a Claim")
	}
	fs.send(t, &v1.AuthorityResponse{Message: &v1.AuthorityResponse_ClaimResult{ClaimResult: &v1.ClaimResult{ClaimId: cl.GetClaimId(), Granted: true}}})
	return cl
}

func (fs *fakeStream) ask(t testing.TB, qs ...*v1.Question) {
	t.Helper()
	fs.send(t, &v1.AuthorityResponse{Message: &v1.AuthorityResponse_Questions{Questions: &v1.Questions{Questions: qs}}})
}

// answers collects n answers, in the order they came, across messages.
func (fs *fakeStream) answers(t testing.TB, n int) []*v1.Answer {
	t.Helper()
	var out []*v1.Answer
	for len(out) < n {
		m := fs.must(t)
		as := m.GetAnswers()
		if as == nil {
			t.Fatalf("expected answers, got %v", m)
		}
		out = append(out, as.GetAnswers()...)
	}
	if len(out) != n {
		t.Fatalf("got %d answers, want %d", len(out), n)
	}
	return out
}

func (fs *fakeStream) close(err error) {
	fs.end <- err
	<-fs.gone
}

// ---- Subscribe ----

func (g *fakeGateway) appendCommit(doc string, ev *v1.CommitEvent) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	d := g.doc(doc)
	ev.Document, ev.Cursor = doc, uint64(len(d.events)+1)
	d.events = append(d.events, ev)
	for s := range g.subs {
		if matches(s.req, doc) {
			s.live <- &v1.SubscribeResponse{Event: &v1.SubscribeResponse_Commit{Commit: ev}}
		}
	}
	return ev.Cursor
}

func (g *fakeGateway) doc(name string) *fakeDoc {
	d := g.docs[name]
	if d == nil {
		d = &fakeDoc{}
		g.docs[name] = d
	}
	return d
}

// retain drops commits at or below floor and serves state as the snapshot.
func (g *fakeGateway) retain(doc string, floor uint64, state *v1.DocumentState) {
	g.mu.Lock()
	defer g.mu.Unlock()
	d := g.doc(doc)
	d.floor, d.state = floor, state
}

func (g *fakeGateway) setSkew(n int64) {
	g.mu.Lock()
	g.skew = n
	g.mu.Unlock()
}

// killSubs ends every live Subscribe stream with err.
func (g *fakeGateway) killSubs(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for s := range g.subs {
		s.kill <- err
		delete(g.subs, s)
	}
}

func (g *fakeGateway) subReq(t testing.TB) *v1.SubscribeRequest {
	t.Helper()
	select {
	case r := <-g.subReqs:
		return r
	case <-time.After(guard):
		t.Fatal("no Subscribe came")
		return nil
	}
}

func matches(req *v1.SubscribeRequest, doc string) bool {
	if d := req.GetDocument(); d != "" {
		return d == doc
	}
	p := req.GetPattern()
	if p.GetExact() != "" {
		return p.GetExact() == doc
	}
	return strings.HasPrefix(doc, p.GetPrefix())
}

func (g *fakeGateway) Subscribe(req *v1.SubscribeRequest, st v1.GatewayService_SubscribeServer) error {
	g.subReqs <- req
	s := &fakeSub{req: req, live: make(chan *v1.SubscribeResponse, 1024), kill: make(chan error, 1)}
	var backlog []*v1.SubscribeResponse
	g.mu.Lock()
	for name, d := range g.docs {
		if !matches(req, name) {
			continue
		}
		last := uint64(len(d.events))
		from, resumed := req.GetResume()[name]
		if resumed {
			from = uint64(max(0, int64(from)+g.skew))
		}
		var reason v1.SnapshotReason
		switch {
		case !resumed && req.GetStart() == v1.StartPosition_START_POSITION_SNAPSHOT:
			reason = v1.SnapshotReason_SNAPSHOT_REASON_REQUESTED
		case !resumed:
			continue
		case from > last:
			reason = v1.SnapshotReason_SNAPSHOT_REASON_AHEAD
		case from < d.floor:
			reason = v1.SnapshotReason_SNAPSHOT_REASON_EXPIRED
		}
		if reason != v1.SnapshotReason_SNAPSHOT_REASON_UNSPECIFIED {
			backlog = append(backlog, &v1.SubscribeResponse{Event: &v1.SubscribeResponse_Snapshot{Snapshot: &v1.SnapshotEvent{
				Document: name, Cursor: last, State: d.state, Reason: reason}}})
			continue
		}
		for _, ev := range d.events[from:] {
			backlog = append(backlog, &v1.SubscribeResponse{Event: &v1.SubscribeResponse_Commit{Commit: ev}})
		}
	}
	g.subs[s] = struct{}{}
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.subs, s)
		g.mu.Unlock()
	}()
	backlog = append(backlog, &v1.SubscribeResponse{Event: &v1.SubscribeResponse_CaughtUp{CaughtUp: &v1.CaughtUp{}}})
	for _, m := range backlog {
		if err := st.Send(m); err != nil {
			return err
		}
	}
	for {
		select {
		case m := <-s.live:
			if err := st.Send(m); err != nil {
				return err
			}
		case err := <-s.kill:
			return err
		case <-st.Context().Done():
			return st.Context().Err()
		}
	}
}

// ---- unary ----

func (g *fakeGateway) GetState(ctx context.Context, r *v1.GetStateRequest) (*v1.GetStateResponse, error) {
	return g.getState(ctx, r)
}

func (g *fakeGateway) WriteCommit(ctx context.Context, r *v1.WriteCommitRequest) (*v1.WriteCommitResponse, error) {
	return g.writeCommit(ctx, r)
}

func (g *fakeGateway) ReplaceState(ctx context.Context, r *v1.ReplaceStateRequest) (*v1.ReplaceStateResponse, error) {
	return g.replaceState(ctx, r)
}

func (g *fakeGateway) ListDocuments(ctx context.Context, r *v1.ListDocumentsRequest) (*v1.ListDocumentsResponse, error) {
	return g.list(ctx, r)
}

// wait receives from ch within the guard.
func wait[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

var errUnavailable = status.Error(codes.Unavailable, "fake gateway going away")
