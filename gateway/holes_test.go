package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// The holes hostile testing found (issue 19), each over real sockets.

// plantedState is a state that adds "planted" to root.
func plantedState(t *testing.T, root commit.ID) []byte {
	t.Helper()
	b, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root, Ref: commit.ObjectKey("planted"), Value: commit.TextValue("yes")}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// create opens name with a new root, answers the gateway's want with state,
// and returns the gateway's topic and the root.
func (r *rawPeer) create(name string, state func(commit.ID) []byte) (uint64, *frame.Root) {
	r.t.Helper()
	root := rootOf()
	r.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: name, Root: root})
	f := r.next()
	if f.Kind != frame.Open || !f.Want {
		r.t.Fatalf("create %q: got %v want=%v (%s %s), want open with want", name, f.Kind, f.Want, f.Reason, f.Message)
	}
	if state != nil {
		r.send(frame.Frame{Kind: frame.State, Topic: 1, State: state(root.ID)})
	}
	return f.Topic, root
}

// recordingAuthority refuses every write and keeps what it was asked.
type recordingAuthority struct {
	mu    sync.Mutex
	asked []*gateway.AcceptRequest
}

func (a *recordingAuthority) Judge(req *gateway.AcceptRequest, reply func(gateway.Verdict)) {
	a.mu.Lock()
	a.asked = append(a.asked, req)
	a.mu.Unlock()
	reply(gateway.Refuse("not-yours", "this backend refuses everything"))
}

func (a *recordingAuthority) MayOpen(_ gateway.OpenRequest, reply func(error)) { reply(nil) }

// Item 1: a creating peer's state is a write. Under -read-only, and with an
// authority that refuses everything, it is refused: the creator's topic
// ends with the reason, nothing is stored, nothing is applied, and a joiner
// finds no document.
func TestCreatorStateIsJudged(t *testing.T) {
	ra := &recordingAuthority{}
	for _, tc := range []struct {
		name   string
		auth   gateway.Authority
		reason protocol.Reason
	}{
		{"read-only", gateway.Policy{ReadOnly: true}, gateway.ReasonReadOnly},
		{"refusing-backend", ra, "not-yours"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := store.NewMemory()
			ts := startGateway(t, gateway.Config{Authority: tc.auth, Store: st})
			r := dialRaw(t, ts.url)
			topic, _ := r.create("doc", func(root commit.ID) []byte { return plantedState(t, root) })
			r.expectFault(topic, tc.reason)
			j := dialRaw(t, ts.url)
			j.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "doc", Want: true})
			j.expectFault(1, protocol.NoDocument)
			if _, _, _, err := ts.State(ctxT(t), "doc"); protocol.ReasonOf(err) != protocol.NoDocument {
				t.Fatalf("state after a refused creation: %v, want no-document", err)
			}
			if _, _, err := st.Load(context.Background(), "doc"); err == nil {
				t.Fatal("the store holds the refused document")
			}
			if n := ts.Metrics().Applied.Load(); n != 0 {
				t.Fatalf("%d commits applied, want 0", n)
			}
		})
	}
	if len(ra.asked) != 1 || !ra.asked[0].State {
		t.Fatalf("the authority was asked %d questions (%+v), want one marked as a state", len(ra.asked), ra.asked)
	}
	if p := ra.asked[0].Paths; len(p) != 1 || strings.Join(p[0], "/") != "planted" {
		t.Fatalf("the state's paths are %q, want [planted]", p)
	}
}

// An accepted state lands as the document's first commit, judged as a
// state, and a joiner gets it.
func TestAcceptedCreatorStateLands(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	r := dialRaw(t, ts.url)
	r.create("doc", func(root commit.ID) []byte { return plantedState(t, root) })
	j := dialRaw(t, ts.url)
	_, st := j.join(1, "doc")
	if st == nil || !strings.Contains(string(st), "planted") {
		t.Fatalf("the joiner's state %x holds no planted", st)
	}
	if n := ts.Metrics().Applied.Load(); n != 1 {
		t.Fatalf("%d commits applied, want 1 (the state)", n)
	}
}

// Item 6: a creator that never sends its state holds the name only for
// StateTimeout; then its topic ends with state-timeout and joiners waiting
// for the state hear no-document instead of silence.
func TestSquattedNameIsReleased(t *testing.T) {
	ts := startGateway(t, gateway.Config{StateTimeout: 200 * time.Millisecond})
	r := dialRaw(t, ts.url)
	topic, _ := r.create("squat", nil)
	j := dialRaw(t, ts.url)
	j.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "squat", Want: true})
	f := j.next()
	if f.Kind != frame.Open {
		t.Fatalf("joiner: got %v, want open", f.Kind)
	}
	j.expectFault(f.Topic, protocol.NoDocument)
	r.expectFault(topic, gateway.ReasonStateTimeout)
	// The name is free: another peer creates it.
	if _, err := dial(t, ts.url, peer.Options{}).Share(ctxT(t), "squat", newDoc()); err != nil {
		t.Fatalf("share after the squatter: %v", err)
	}
}

// Item 3: names that were never there hold nothing once declined, so one
// socket's flood of them does not fill MaxDocuments for everyone.
func TestAbsentNameFloodHoldsNothing(t *testing.T) {
	const max = 20
	ts := startGateway(t, gateway.Config{MaxDocuments: max, MaxOpensPerSecond: -1, IdleUnload: time.Hour})
	ws, _, err := websocket.Dial(ctxT(t), ts.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	fc := countFrames(t, ws)
	const flood = 3000
	for i := 1; i <= flood; i++ {
		b, _ := frame.Encode(frame.Frame{Kind: frame.Open, Topic: uint64(i), Name: fmt.Sprintf("absent%d", i), Want: true})
		if err := ws.Write(ctxT(t), websocket.MessageBinary, b); err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
	}
	fc.wait(t, "answers", func(k map[frame.Kind]int, f map[string]int) bool {
		return f[string(protocol.NoDocument)]+f[string(gateway.ReasonTooManyDocuments)] == flood
	})
	eventually(t, "the declined names to go", func() bool { return len(ts.Documents(context.Background())) == 0 })
	if _, err := dial(t, ts.url, peer.Options{}).Share(ctxT(t), "fresh", newDoc()); err != nil {
		t.Fatalf("share after the flood: %v", err)
	}
}

// Item 3: at MaxDocuments a document nobody holds makes room at once,
// without waiting for IdleUnload, and comes back whole from the store.
func TestIdleDocumentsMakeRoomAtTheBound(t *testing.T) {
	const max = 3
	ts := startGateway(t, gateway.Config{MaxDocuments: max, IdleUnload: time.Hour})
	for i := 0; i < max; i++ {
		p := dial(t, ts.url, peer.Options{})
		d, err := p.Share(ctxT(t), fmt.Sprintf("d%d", i), newDoc())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := set(d, "k", commit.IntValue(int64(i))); err != nil {
			t.Fatal(err)
		}
		waitCursor(t, ts.Server, fmt.Sprintf("d%d", i), 1)
		p.Close()
	}
	eventually(t, "the documents to be idle", func() bool {
		for _, info := range ts.Documents(context.Background()) {
			if info.Links > 0 {
				return false
			}
		}
		return true
	})
	for i := max; i < 2*max; i++ {
		p := dial(t, ts.url, peer.Options{})
		if _, err := p.Share(ctxT(t), fmt.Sprintf("d%d", i), newDoc()); err != nil {
			t.Fatalf("share d%d at the bound with idle documents: %v", i, err)
		}
		p.Close()
	}
	eventually(t, "the new documents to be idle", func() bool {
		for _, info := range ts.Documents(context.Background()) {
			if info.Links > 0 {
				return false
			}
		}
		return true
	})
	for i := 0; i < max; i++ {
		d, err := dial(t, ts.url, peer.Options{}).Join(ctxT(t), fmt.Sprintf("d%d", i))
		if err != nil {
			t.Fatalf("join d%d after it made room: %v", i, err)
		}
		root, _ := d.Root()
		var got commit.Value
		d.Read(func(doc *document.Document) { got, _ = doc.Get(root, commit.ObjectKey("k")) })
		if got.Type != commit.Int || got.Int != int64(i) {
			t.Fatalf("d%d came back with k=%+v, want %d", i, got, i)
		}
	}
}

// Item 3: opens per link per second are bounded, with a named fault.
func TestOpenRateIsBounded(t *testing.T) {
	ts := startGateway(t, gateway.Config{MaxOpensPerSecond: 1, MaxTopicsPerLink: 5})
	ws, _, err := websocket.Dial(ctxT(t), ts.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	fc := countFrames(t, ws)
	const n = 40
	for i := 1; i <= n; i++ {
		b, _ := frame.Encode(frame.Frame{Kind: frame.Open, Topic: uint64(i), Name: fmt.Sprintf("n%d", i), Want: true})
		if err := ws.Write(ctxT(t), websocket.MessageBinary, b); err != nil {
			t.Fatal(err)
		}
	}
	// On a slow host a second's worth of opens may pass the rate while the
	// first ones' declines are still on their way: too-many-topics then.
	fc.wait(t, "answers", func(k map[frame.Kind]int, f map[string]int) bool {
		return f[string(protocol.NoDocument)]+f[string(gateway.ReasonTooManyOpens)]+f[string(protocol.TooManyTopics)] == n
	})
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.faults[string(gateway.ReasonTooManyOpens)] == 0 {
		t.Fatalf("faults %v: no too-many-opens past the rate", fc.faults)
	}
}

// Item 4: a document's state is bounded by MaxDocumentBytes: the commit
// that would pass it is refused with document-too-large (a peer's and a
// backend's alike), and a joiner gets the state that holds.
func TestDocumentSizeIsBounded(t *testing.T) {
	ts := startGateway(t, gateway.Config{MaxDocumentBytes: 8 << 10})
	a, b := sharedPair(t, ts.url, "doc")
	big := strings.Repeat("x", 5000)
	if _, err := set(a, "k1", text(big)); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, b, 1)
	if _, err := set(a, "k2", text(big)); err != nil {
		t.Fatal(err)
	}
	ref := nextEvent[peer.Refused](t, a)
	if len(ref.Reasons) == 0 || ref.Reasons[0].Code != string(gateway.ReasonDocumentTooLarge) {
		t.Fatalf("refused %+v, want document-too-large", ref.Reasons)
	}
	root, _ := a.Root()
	w, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root, Ref: commit.ObjectKey("k3"), Value: text(big)}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Write(ctxT(t), "doc", gateway.Origin{Kind: "backend", ID: "b"}, w, nil); protocol.ReasonOf(err) != gateway.ReasonDocumentTooLarge {
		t.Fatalf("backend write over the bound: %v, want document-too-large", err)
	}
	// A replace that shrinks it is fine, and so is a small add after it.
	if _, err := set(a, "k1", text("small")); err != nil {
		t.Fatal(err)
	}
	if _, err := set(a, "k4", text(big)); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, b, 2)
	j := dialRaw(t, ts.url)
	_, st := j.join(1, "doc")
	if len(st) > 8<<10 || !strings.Contains(string(st), big) {
		t.Fatalf("the joiner's state is %d bytes, want k4 within the bound", len(st))
	}
}

// Item 4: a document whose state cannot be sent in one message (stored
// before the bound was lowered) is answered with a fault on that topic
// alone: never an open and then silence, never the whole link.
func TestUnservableJoinFaultsOnlyItsTopic(t *testing.T) {
	st := store.NewMemory()
	first := startGateway(t, gateway.Config{Store: st})
	a, _ := sharedPair(t, first.url, "big")
	if _, err := set(a, "k", text(strings.Repeat("x", 200<<10))); err != nil {
		t.Fatal(err)
	}
	waitCursor(t, first.Server, "big", 1)
	first.stop(t)
	ts := startGateway(t, gateway.Config{Store: st, MaxMessageBytes: 64 << 10})
	if _, err := dial(t, ts.url, peer.Options{}).Share(ctxT(t), "small", newDoc()); err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, ts.url)
	r.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "big", Want: true})
	f := r.next()
	if f.Kind != frame.Open {
		t.Fatalf("got %v, want open", f.Kind)
	}
	r.expectFault(f.Topic, gateway.ReasonDocumentTooLarge)
	if _, st := r.join(2, "small"); st != nil {
		t.Fatalf("small: state %x, want empty", st)
	}
}
