package gateway_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/gateway/requests"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Access: who a link is, is decided once at the handshake, and nothing a
// peer sends afterwards changes what the authority sees.

// sessions identifies peers by their session cookie, counting calls.
type sessions struct {
	tokens map[string]string // token -> user id
	calls  atomic.Int64
}

func (s *sessions) Identify(_ context.Context, p admission.Peer) (admission.Identity, error) {
	s.calls.Add(1)
	for _, c := range p.Cookies {
		if c.Name == "session" {
			if id, ok := s.tokens[c.Value]; ok {
				return admission.Identity{ID: id, Roles: []string{"user"}}, nil
			}
		}
	}
	return admission.Identity{}, &admission.Refusal{Reasons: []admission.Reason{{Code: "no-session", Message: "sign in first"}}}
}

func cookie(token string) http.Header {
	return http.Header{"Cookie": {"session=" + token}}
}

// recorder is an authority that records every identity it is shown and
// lets a rule decide. It answers at once.
type recorder struct {
	mu     sync.Mutex
	judged []gateway.Origin // one per commit judged
	opened []gateway.OpenRequest
	// mayOpen and judge decide; nil allows.
	mayOpen func(gateway.OpenRequest) error
	judge   func(*gateway.AcceptRequest) gateway.Verdict
}

func (r *recorder) Judge(req *gateway.AcceptRequest, reply func(gateway.Verdict)) {
	r.mu.Lock()
	r.judged = append(r.judged, req.Origin)
	r.mu.Unlock()
	if r.judge != nil {
		reply(r.judge(req))
		return
	}
	reply(gateway.Verdict{})
}

func (r *recorder) MayOpen(req gateway.OpenRequest, reply func(error)) {
	r.mu.Lock()
	r.opened = append(r.opened, req)
	r.mu.Unlock()
	if r.mayOpen != nil {
		reply(r.mayOpen(req))
		return
	}
	reply(nil)
}

func (r *recorder) snapshot() ([]gateway.Origin, []gateway.OpenRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.judged), slices.Clone(r.opened)
}

// The identity fixed at the handshake is the only one the authority sees
// for that link: on every open and every commit, whatever the frames say.
// The identifier runs once per socket, never per frame.
func TestIdentityIsFixedAtTheHandshake(t *testing.T) {
	ids := &sessions{tokens: map[string]string{"tok-alice": "alice", "tok-bob": "bob"}}
	auth := &recorder{}
	var callIdentities sync.Map // call name -> identity id
	calls := requests.CallsFunc(func(_ context.Context, c requests.Call, _ func(json.RawMessage)) (json.RawMessage, error) {
		callIdentities.Store(c.Name, c.Identity.ID)
		return json.RawMessage(`true`), nil
	})
	ts := startGateway(t, gateway.Config{Authority: auth, Calls: calls, Admission: admission.Config{Identifier: ids}})
	alice := dial(t, ts.url, peer.Options{Header: cookie("tok-alice")})
	da, err := alice.Share(ctxT(t), "doc", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	// bob speaks by hand and says everything a frame can say about alice.
	ws, _, err := websocket.Dial(ctxT(t), ts.url, &websocket.DialOptions{HTTPHeader: cookie("tok-bob")})
	if err != nil {
		t.Fatal(err)
	}
	bob := &rawPeer{t: t, ws: ws}
	t.Cleanup(func() { ws.CloseNow() })
	bob.join(1, "doc")
	root, _ := da.Root()
	for i, v := range []string{"alice", "identity=alice", "session=tok-alice"} {
		c, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root, Ref: commit.ObjectKey("as-" + v), Value: text(v)}}})
		if err != nil {
			t.Fatal(err)
		}
		bob.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: uint64(i + 1), Commits: [][]byte{c}})
	}
	bob.send(frame.Frame{Kind: frame.Open, Topic: 2, Name: "state:alice", Root: rootOf()})
	if f := bob.next(); f.Kind != frame.Open || f.Name != "state:alice" {
		t.Fatalf("got %v, want the open of state:alice", f.Kind)
	}
	if err := ws.Write(ctxT(t), websocket.MessageText, []byte(`{"id":1,"name":"whoami","args":{"identity":"alice"}}`)); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, da, 3)
	for i := range 3 {
		if _, err := set(da, key(1, i), text("from alice")); err != nil {
			t.Fatal(err)
		}
	}
	waitCursor(t, ts.Server, "doc", 6)
	eventually(t, "the call", func() bool { _, ok := callIdentities.Load("whoami"); return ok })

	judged, opened := auth.snapshot()
	byIdentity := map[string][]string{} // identity -> link ids it was seen on
	for _, o := range judged {
		if o.Kind != "link" {
			t.Errorf("origin kind %q, want link", o.Kind)
		}
		if !slices.Contains(byIdentity[o.Identity.ID], o.ID) {
			byIdentity[o.Identity.ID] = append(byIdentity[o.Identity.ID], o.ID)
		}
	}
	if len(judged) != 6 || len(byIdentity) != 2 || len(byIdentity["alice"]) != 1 || len(byIdentity["bob"]) != 1 {
		t.Fatalf("judged %d commits as %v, want 6 as alice and bob on one link each", len(judged), byIdentity)
	}
	if byIdentity["alice"][0] == byIdentity["bob"][0] {
		t.Fatal("alice and bob share a link id")
	}
	seen := map[string][]string{} // document -> identities that opened it
	for _, o := range opened {
		seen[o.Document] = append(seen[o.Document], o.Identity.ID)
	}
	slices.Sort(seen["doc"])
	if len(opened) != 3 || !slices.Equal(seen["doc"], []string{"alice", "bob"}) || !slices.Equal(seen["state:alice"], []string{"bob"}) {
		t.Fatalf("opens seen as %v, want doc by alice and bob, state:alice by bob", seen)
	}
	if id, _ := callIdentities.Load("whoami"); id != "bob" {
		t.Errorf("the call ran as %v, want bob", id)
	}
	if n := ids.calls.Load(); n != 2 {
		t.Errorf("the identifier ran %d times for two sockets", n)
	}
}

// A frame has no field that could carry an identity; a field added to
// frame.Frame must be weighed against this test before it passes.
func TestFramesCarryNoIdentity(t *testing.T) {
	var got []string
	ft := reflect.TypeFor[frame.Frame]()
	for i := range ft.NumField() {
		got = append(got, ft.Field(i).Name)
	}
	want := []string{"Kind", "Topic", "Name", "Root", "Want", "State", "First", "Commits", "Seq", "Reasons", "Reason", "Message"}
	if !slices.Equal(got, want) {
		t.Fatalf("frame.Frame fields %v, want %v", got, want)
	}
}

// A peer the authority does not let open a document gets fault forbidden on
// its topic and sees nothing of it: no open, no state, no commit, while
// allowed peers go on writing. Its link carries on for what it may open.
func TestForbiddenPeerSeesNothing(t *testing.T) {
	ids := &sessions{tokens: map[string]string{"tok-alice": "alice", "tok-carol": "carol", "tok-mallory": "mallory"}}
	auth := &recorder{mayOpen: func(req gateway.OpenRequest) error {
		if strings.HasPrefix(req.Document, "secret:") && req.Identity.ID == "mallory" {
			return errors.New("not yours")
		}
		return nil
	}}
	ts := startGateway(t, gateway.Config{Authority: auth, Admission: admission.Config{Identifier: ids}})
	alice := dial(t, ts.url, peer.Options{Header: cookie("tok-alice")})
	da, err := alice.Share(ctxT(t), "secret:plans", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set(da, "plan", text("the secret plan")); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Share(ctxT(t), "public", newDoc()); err != nil {
		t.Fatal(err)
	}
	carol := dial(t, ts.url, peer.Options{Header: cookie("tok-carol")})
	dc, err := carol.Join(ctxT(t), "secret:plans")
	if err != nil {
		t.Fatal(err)
	}
	ws, _, err := websocket.Dial(ctxT(t), ts.url, &websocket.DialOptions{HTTPHeader: cookie("tok-mallory")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	m := &rawPeer{t: t, ws: ws}
	// Holding nothing, with a root, and again with want on the same topic.
	m.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "secret:plans", Want: true})
	m.expectFault(1, gateway.ReasonForbidden)
	root, _ := da.Root()
	m.send(frame.Frame{Kind: frame.Open, Topic: 2, Name: "secret:plans", Root: &frame.Root{ID: root, Kind: commit.Object}})
	m.expectFault(2, gateway.ReasonForbidden)
	// Frames about the topics it was refused are about nothing.
	c, _ := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root, Ref: commit.ObjectKey("evil"), Value: text("x")}}})
	m.send(frame.Frame{Kind: frame.Commits, Topic: 2, First: 1, Commits: [][]byte{c}})
	m.expectFault(2, protocol.NoTopic)
	for i := range 5 {
		if _, err := set(da, key(2, i), text("more secrets")); err != nil {
			t.Fatal(err)
		}
	}
	waitApplied(t, dc, 5)
	// The next frames mallory sees are those of what it may open.
	if _, st := m.join(3, "public"); st != nil {
		t.Fatal("public should be empty")
	}
	waitForLinks(t, ts.Server, "secret:plans", 2)
	if _, _, cursor, _ := ts.State(ctxT(t), "secret:plans"); cursor != 6 {
		t.Fatalf("cursor %d, want 6: mallory wrote nothing", cursor)
	}
	judged, _ := auth.snapshot()
	for _, o := range judged {
		if o.Identity.ID == "mallory" {
			t.Fatal("a commit of mallory's reached the authority")
		}
	}
}

// A read-only peer (the authority's rule for its identity) reads everything
// and writes nothing: each write is refused read-only to it alone, never
// reaches another peer or the store, and its link carries on.
func TestReadOnlyPeerIsRefusedWrites(t *testing.T) {
	ids := &sessions{tokens: map[string]string{"tok-alice": "alice", "tok-carol": "carol", "tok-viewer": "viewer"}}
	auth := &recorder{judge: func(req *gateway.AcceptRequest) gateway.Verdict {
		if req.Origin.Identity.ID == "viewer" {
			return gateway.Refuse(gateway.ReasonReadOnly, "viewers may not write")
		}
		return gateway.Verdict{}
	}}
	ts := startGateway(t, gateway.Config{Authority: auth, Admission: admission.Config{Identifier: ids}})
	alice := dial(t, ts.url, peer.Options{Header: cookie("tok-alice")})
	da, err := alice.Share(ctxT(t), "doc", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	carol := dial(t, ts.url, peer.Options{Header: cookie("tok-carol")})
	dc, err := carol.Join(ctxT(t), "doc")
	if err != nil {
		t.Fatal(err)
	}
	viewer := dial(t, ts.url, peer.Options{Header: cookie("tok-viewer")})
	dv, err := viewer.Join(ctxT(t), "doc")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		seq, err := set(dv, key(3, i), text("vandal"))
		if err != nil {
			t.Fatal(err)
		}
		if r := nextEvent[peer.Refused](t, dv); r.Seq != seq || r.Reasons[0].Code != string(gateway.ReasonReadOnly) {
			t.Fatalf("refusal %+v, want read-only for seq %d", r, seq)
		}
	}
	// The hub saw the refused writes before this one; had it delivered
	// them, they would reach alice first.
	if _, err := set(dc, "by-carol", text("ok")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*peer.Doc{da, dv} {
		if got := waitApplied(t, d, 1); got[0].Commit.Deltas[0].Ref.Key != "by-carol" {
			t.Fatalf("%s got %q first, want by-carol", d.Name(), got[0].Commit.Deltas[0].Ref.Key)
		}
	}
	if _, _, cursor, _ := ts.State(ctxT(t), "doc"); cursor != 1 {
		t.Fatalf("cursor %d, want 1", cursor)
	}
}

// syncBuffer is a bytes.Buffer a log handler may write from any goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

func jsonLogger(w *syncBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Logs never hold a token, a cookie or a document's contents, in any
// spelling, even on the paths that log the most: refusals, bad frames,
// failing store writes and reloads.
func TestLogsHoldNoSecrets(t *testing.T) {
	const (
		token  = "tok-7f3a9c2e51d8b604"
		bearer = "bearer-5c1e88f0a2d94b37"
		secret = "the launch code is 0451"
		keyS   = "k-secret-key-9d2f"
	)
	ids := admission.IdentifierFunc(func(_ context.Context, p admission.Peer) (admission.Identity, error) {
		for _, c := range p.Cookies {
			if c.Name == "session" && c.Value == token && p.Header.Get("Authorization") == "Bearer "+bearer {
				return admission.Identity{ID: "u1"}, nil
			}
		}
		return admission.Identity{}, &admission.Refusal{Reasons: []admission.Reason{{Code: "no-session", Message: "sign in first"}}}
	})
	var failing atomic.Bool
	st, err := store.Open(t.TempDir(), store.Options{ProbeInterval: time.Hour, Fault: func() error {
		if failing.Load() {
			return errors.New("injected: disk on fire")
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	logs := &syncBuffer{}
	refuse := &recorder{judge: func(req *gateway.AcceptRequest) gateway.Verdict {
		for _, d := range req.Commit.Deltas {
			if d.Ref.Key == "refuse-me" {
				return gateway.Refuse("not-here", "refused")
			}
		}
		return gateway.Verdict{}
	}}
	ts := startGateway(t, gateway.Config{Logger: jsonLogger(logs), Store: st, Authority: refuse, Admission: admission.Config{Identifier: ids}})
	hdr := http.Header{"Cookie": {"session=" + token}, "Authorization": {"Bearer " + bearer}}
	a := dial(t, ts.url, peer.Options{Header: hdr})
	da, err := a.Share(ctxT(t), "doc", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	b := dial(t, ts.url, peer.Options{Header: hdr})
	db, err := b.Join(ctxT(t), "doc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set(da, keyS, text(secret)); err != nil {
		t.Fatal(err)
	}
	if _, err := set(da, "refuse-me", text(secret)); err != nil {
		t.Fatal(err)
	}
	nextEvent[peer.Refused](t, da)
	waitApplied(t, db, 1)
	// A failing store logs, refuses and reloads the document.
	failing.Store(true)
	if _, err := set(da, keyS+"2", commit.BytesValue([]byte(secret))); err != nil {
		t.Fatal(err)
	}
	nextEvent[peer.Refused](t, da)
	failing.Store(false)
	// Bad input on a socket with the same credentials.
	ws, _, err := websocket.Dial(ctxT(t), ts.url, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	r := &rawPeer{t: t, ws: ws}
	ours, _ := r.join(1, "doc")
	bad := append([]byte{0x81, 0x81, 0x84, 0x00, 0x4c}, []byte(secret)...)
	r.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{bad}})
	r.expectRefused(ours, 1)
	if err := ws.Write(ctxT(t), websocket.MessageText, []byte(`{"id":1,"name":"x","args":{"secret":"`+secret+`"}}`)); err != nil {
		t.Fatal(err)
	}
	// Bytes that are not one value: a text of the secret, then more.
	r.sendBytes(append(append([]byte{0x81, 0x78, byte(len(secret))}, secret...), 0x00))
	r.expectClosed()
	// Refused handshakes carry the secrets too.
	for _, h := range []http.Header{{"Cookie": {"session=" + token}}, {"Authorization": {"Bearer " + bearer}, "Origin": {"https://evil.example"}}} {
		if _, err := peer.Dial(ctxT(t), ts.url, peer.Options{Header: h}); err == nil {
			t.Fatal("a handshake without both credentials was admitted")
		}
	}
	ts.stop(t)

	out := logs.String()
	if !strings.Contains(out, `"level":"ERROR"`) {
		t.Fatalf("the failing store logged no error; the test saw no logs:\n%s", out)
	}
	for _, s := range []string{token, bearer, secret, keyS} {
		for _, spelled := range []string{s, hex.EncodeToString([]byte(s)), base64.StdEncoding.EncodeToString([]byte(s)), base64.RawURLEncoding.EncodeToString([]byte(s))} {
			if strings.Contains(out, spelled) {
				t.Errorf("the logs hold %q (as %q)", s, spelled)
			}
		}
	}
	if strings.Contains(out, "session=") || strings.Contains(strings.ToLower(out), "bearer ") {
		t.Error("the logs hold a cookie or an Authorization header")
	}
}
