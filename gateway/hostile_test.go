package gateway_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
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
	"github.com/weftgate/weftgate/internal/spectest"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Hostile input over real sockets: every rejection fixture gets its named
// outcome, and bounds hold against lengths, nesting, topics, floods, names,
// sizes, text and handshakes that try to break them.

// rawPeer is a WebSocket that speaks frames by hand, so a test can send what
// no well-behaved peer would.
type rawPeer struct {
	t  *testing.T
	ws *websocket.Conn
}

func dialRaw(t *testing.T, url string) *rawPeer {
	t.Helper()
	ws, _, err := websocket.Dial(ctxT(t), url, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	ws.SetReadLimit(16 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return &rawPeer{t: t, ws: ws}
}

func (r *rawPeer) sendBytes(b []byte) {
	r.t.Helper()
	if err := r.ws.Write(ctxT(r.t), websocket.MessageBinary, b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

func (r *rawPeer) send(f frame.Frame) {
	r.t.Helper()
	b, err := frame.Encode(f)
	if err != nil {
		r.t.Fatalf("encode %v: %v", f.Kind, err)
	}
	r.sendBytes(b)
}

// read returns the next frame the gateway sent, or the error that ended the
// socket. Text messages (the request channel) are skipped.
func (r *rawPeer) read() (frame.Frame, error) {
	r.t.Helper()
	for {
		typ, b, err := r.ws.Read(ctxT(r.t))
		if err != nil {
			return frame.Frame{}, err
		}
		if typ != websocket.MessageBinary {
			continue
		}
		f, err := frame.Decode(b)
		if err != nil {
			r.t.Fatalf("the gateway sent bytes that are not a frame: %v", err)
		}
		return f, nil
	}
}

func (r *rawPeer) next() frame.Frame {
	r.t.Helper()
	f, err := r.read()
	if err != nil {
		r.t.Fatalf("socket ended: %v", err)
	}
	return f
}

// expectFault reads the next frame and fails unless it is a fault on topic
// with reason.
func (r *rawPeer) expectFault(topic uint64, reason protocol.Reason) frame.Frame {
	r.t.Helper()
	f := r.next()
	if f.Kind != frame.Fault || f.Topic != topic || f.Reason != string(reason) {
		r.t.Fatalf("got %v topic %d reason %q (%s), want fault %q on topic %d", f.Kind, f.Topic, f.Reason, f.Message, reason, topic)
	}
	return f
}

// expectClosed reads until the socket ends, failing on any frame, and
// returns the close status (-1 when the connection was cut without one).
func (r *rawPeer) expectClosed() websocket.StatusCode {
	r.t.Helper()
	f, err := r.read()
	if err == nil {
		r.t.Fatalf("got %v topic %d (%s %s), want the socket closed", f.Kind, f.Topic, f.Reason, f.Message)
	}
	status := websocket.CloseStatus(err)
	if status == -1 && !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "closed") && !strings.Contains(err.Error(), "reset") {
		r.t.Fatalf("read: %v, want the socket closed", err)
	}
	return status
}

// join opens name as topic with want, and returns the gateway's topic for
// it and the state it answered with, which must come before any commit.
func (r *rawPeer) join(topic uint64, name string) (uint64, []byte) {
	r.t.Helper()
	ours, _, st := r.joinRoot(topic, name)
	return ours, st
}

func (r *rawPeer) joinRoot(topic uint64, name string) (uint64, *frame.Root, []byte) {
	r.t.Helper()
	r.send(frame.Frame{Kind: frame.Open, Topic: topic, Name: name, Want: true})
	f := r.next()
	if f.Kind != frame.Open || f.Name != name {
		r.t.Fatalf("join %q: got %v topic %d %q (%s %s), want open", name, f.Kind, f.Topic, f.Name, f.Reason, f.Message)
	}
	ours, root := f.Topic, f.Root
	st := r.next()
	if st.Kind != frame.State || st.Topic != ours {
		r.t.Fatalf("join %q: got %v topic %d, want state on %d", name, st.Kind, st.Topic, ours)
	}
	return ours, root, st.State
}

// expectRefused reads the next frame and fails unless it refuses seq on
// topic, returning the reasons.
func (r *rawPeer) expectRefused(topic, seq uint64) []frame.Reason {
	r.t.Helper()
	f := r.next()
	if f.Kind != frame.Refused || f.Topic != topic || f.Seq != seq {
		r.t.Fatalf("got %v topic %d seq %d (%s %s), want refused seq %d on topic %d", f.Kind, f.Topic, f.Seq, f.Reason, f.Message, seq, topic)
	}
	return f.Reasons
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("hex: %v", err)
	}
	return b
}

// badFrameTopic is the topic the gateway's fault bad-frame names for each
// frame rejection fixture: the frame's own topic element when the frame is
// a known kind other than fault and that element is a number of at least 1
// (replication.md section 2: a fault answering a frame names the number the
// frame carried), else 0, the link itself. A topic fault ends that topic
// and the link carries on; a link fault ends the link.
var badFrameTopic = map[string]uint64{
	"invalid-001-not-an-array":              0,
	"invalid-002-empty":                     0,
	"invalid-003-unknown-kind":              0,
	"invalid-004-wrong-arity":               1,
	"invalid-005-topic-not-a-number":        0,
	"invalid-006-empty-commits":             1,
	"invalid-007-empty-reasons":             1,
	"invalid-008-unknown-root-kind":         1,
	"invalid-009-want-not-a-boolean":        1,
	"invalid-010-name-not-text":             1,
	"invalid-011-root-not-bytes":            1,
	"invalid-012-commit-not-bytes":          1,
	"invalid-013-reason-path-not-text":      1,
	"invalid-014-reason-wrong-arity":        1,
	"invalid-015-fault-message-not-text":    0,
	"invalid-016-topic-zero":                0,
	"invalid-017-sequence-zero":             1,
	"invalid-018-refused-sequence-zero":     1,
	"invalid-019-open-half-a-root":          1,
	"invalid-020-open-nothing-without-want": 1,
}

// Every frame rejection fixture, sent as a binary message, is answered
// fault bad-frame. One naming a usable topic ends only that topic, and the
// link goes on serving; any other ends the link after the fault.
func TestFrameRejectionFixturesOverASocket(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	owner := dial(t, ts.url, peer.Options{})
	if _, err := owner.Share(ctxT(t), "alive", newDoc()); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(spectest.Dir(t), "frames", "invalid-*.json"))
	if len(files) != len(badFrameTopic) {
		t.Fatalf("%d frame rejection fixtures, the table knows %d", len(files), len(badFrameTopic))
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			var fx struct{ Reason, Bytes string }
			readJSON(t, path, &fx)
			topic, ok := badFrameTopic[name]
			if !ok {
				t.Fatalf("no expected topic for %s", name)
			}
			if fx.Reason != string(protocol.BadFrame) {
				t.Fatalf("fixture reason %q", fx.Reason)
			}
			// The fixtures name topic 1; here it is live.
			r := dialRaw(t, ts.url)
			r.join(1, "alive")
			waitForLinks(t, ts.Server, "alive", 2)
			r.sendBytes(unhex(t, fx.Bytes))
			r.expectFault(topic, protocol.BadFrame)
			if topic == 0 {
				r.expectClosed()
				waitForLinks(t, ts.Server, "alive", 1)
				return
			}
			// The topic ended at the gateway; the link carries on, and
			// the name opens again under a new number.
			waitForLinks(t, ts.Server, "alive", 1)
			r.join(2, "alive")
			waitForLinks(t, ts.Server, "alive", 2)
			r.ws.Close(websocket.StatusNormalClosure, "")
			waitForLinks(t, ts.Server, "alive", 1)
		})
	}
}

type commitRejection struct {
	Name    string
	Stage   string
	Reason  string
	Initial json.RawMessage
	Bytes   string
}

func commitRejections(t *testing.T) []commitRejection {
	var out []commitRejection
	for _, path := range spectest.Files(t, filepath.Join("fixtures", "invalid")) {
		var fx commitRejection
		readJSON(t, path, &fx)
		fx.Name = strings.TrimSuffix(filepath.Base(path), ".json")
		out = append(out, fx)
	}
	return out
}

// Every decode-stage commit rejection fixture, sent inside a commits frame
// on a live topic, is refused with the fixture's reason; the topic and the
// link carry on, and a good commit after them all lands and reaches the
// other peer.
func TestDecodeStageCommitRejectionsOverASocket(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	owner := dial(t, ts.url, peer.Options{})
	od, err := owner.Share(ctxT(t), "doc", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, ts.url)
	ours, _ := r.join(1, "doc")
	seq := uint64(0)
	n := 0
	for _, fx := range commitRejections(t) {
		if fx.Stage != "decode" {
			continue
		}
		n++
		seq++
		r.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: seq, Commits: [][]byte{unhex(t, fx.Bytes)}})
		rs := r.expectRefused(ours, seq)
		if len(rs) != 1 || rs[0].Code != fx.Reason {
			t.Errorf("%s: refused with %+v, want %s", fx.Name, rs, fx.Reason)
		}
	}
	if n != 30 {
		t.Fatalf("%d decode-stage fixtures, want 30", n)
	}
	root, _ := od.Root()
	good, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root, Ref: commit.ObjectKey("after"), Value: text("ok")}}})
	if err != nil {
		t.Fatal(err)
	}
	seq++
	r.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: seq, Commits: [][]byte{good}})
	got := waitApplied(t, od, 1)
	if got[0].Commit.Deltas[0].Ref.Key != "after" {
		t.Fatalf("owner got %+v", got[0].Commit)
	}
	if _, _, cursor, _ := ts.State(ctxT(t), "doc"); cursor != 1 {
		t.Fatalf("cursor %d, want 1: only the good commit lands", cursor)
	}
}

// Every apply-stage commit rejection fixture is refused with its reason
// against a document built from its initial (shared by a peer), and the
// document is left exactly as it was.
func TestApplyStageCommitRejectionsOverASocket(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	owner := dial(t, ts.url, peer.Options{})
	n := 0
	for _, fx := range commitRejections(t) {
		if fx.Stage != "apply" {
			continue
		}
		n++
		t.Run(fx.Name, func(t *testing.T) {
			initial, err := document.ParseJSON(fx.Initial, document.Limits{})
			if err != nil {
				t.Fatalf("initial: %v", err)
			}
			want := encodeState(t, initial.Snapshot())
			if _, err := owner.Share(ctxT(t), fx.Name, initial); err != nil {
				t.Fatal(err)
			}
			r := dialRaw(t, ts.url)
			ours, root, state := r.joinRoot(1, fx.Name)
			if string(state) != want {
				t.Fatalf("joined state differs from the fixture's initial")
			}
			r.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{unhex(t, fx.Bytes)}})
			rs := r.expectRefused(ours, 1)
			if len(rs) == 0 || rs[0].Code != fx.Reason {
				t.Fatalf("refused with %+v, want %s", rs, fx.Reason)
			}
			if got := gatewayState(t, ts.Server, fx.Name); got != want {
				t.Fatal("the refused commit changed the gateway's document")
			}
			// The topic carries on: a re-open with want is answered.
			r.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: fx.Name, Root: root, Want: true})
			if f := r.next(); f.Kind != frame.State || string(f.State) != want {
				t.Fatalf("after the refusal got %v (%s %s), want the unchanged state", f.Kind, f.Reason, f.Message)
			}
		})
	}
	if n != 8 {
		t.Fatalf("%d apply-stage fixtures, want 8", n)
	}
}

// allocated runs fn and returns how many bytes the whole process allocated
// meanwhile: a decoder that believed a length would show gigabytes.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// maxHostileAlloc bounds what one hostile test may allocate in all: a few
// small messages and their sockets, nothing near what the heads promise.
const maxHostileAlloc = 32 << 20

// Lengths that promise gigabytes end the link without a word and without
// the gateway allocating what they promise; inside a commit on a live topic
// they are refused as truncated.
func TestLengthsThatPromiseGigabytes(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	const gig = "0000000100000000" // 2^32 as an 8-byte argument
	frames := map[string]string{
		"bytes 2^32":        "8402010181" + "5b" + gig + "616263",
		"bytes 2^32-1":      "8402010181" + "5affffffff" + "616263",
		"bytes 2^64-1":      "8402010181" + "5bffffffffffffffff",
		"name 2^32":         "860001" + "7b" + gig + "62",
		"commit list 2^32":  "84020101" + "9b" + gig + "4101",
		"frame array 2^32":  "9b" + gig + "04",
		"frame array 2^53":  "9b0020000000000000" + "04",
		"reasons list 2^32": "84030101" + "9b" + gig,
	}
	n := allocated(func() {
		for name, h := range frames {
			r := dialRaw(t, ts.url)
			r.sendBytes(unhex(t, h))
			if s := r.expectClosed(); s != websocket.StatusUnsupportedData {
				t.Errorf("%s: closed with %v, want 1003", name, s)
			}
		}
	})
	t.Logf("allocated %d bytes", n)
	if n > maxHostileAlloc {
		t.Fatalf("the gateway allocated %d bytes for heads promising gigabytes", n)
	}
	// Inside a commit the commit decoder refuses the same heads.
	owner := dial(t, ts.url, peer.Options{})
	if _, err := owner.Share(ctxT(t), "doc", newDoc()); err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, ts.url)
	ours, _ := r.join(1, "doc")
	commits := [][]byte{
		unhex(t, "8181"+"5b"+gig+"00"),
		unhex(t, "81"+"9b"+gig),
		unhex(t, "818184004c000000000000000000000001"+"8200"+"7b"+gig),
	}
	n = allocated(func() {
		for i, c := range commits {
			seq := uint64(i + 1)
			r.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: seq, Commits: [][]byte{c}})
			if rs := r.expectRefused(ours, seq); rs[0].Code != string(protocol.Truncated) {
				t.Errorf("commit %d refused with %+v, want truncated", i, rs)
			}
		}
	})
	t.Logf("allocated %d bytes", n)
	if n > maxHostileAlloc {
		t.Fatalf("the gateway allocated %d bytes for commits promising gigabytes", n)
	}
}

// Arrays nested past wire.MaxDepth end the link when the frame is nested,
// and are refused as nesting-too-deep when a commit is; the deepest nesting
// a message can hold costs no more than a shallow one.
func TestNestingPastTheLimit(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	deep := func(n int) []byte { return append(bytesOf(0x81, n), 0x00) }
	n := allocated(func() {
		for _, depth := range []int{9, 1000, 1<<20 - 16} {
			r := dialRaw(t, ts.url)
			r.sendBytes(deep(depth))
			if s := r.expectClosed(); s != websocket.StatusUnsupportedData {
				t.Errorf("depth %d: closed with %v, want 1003", depth, s)
			}
		}
	})
	t.Logf("allocated %d bytes", n)
	if n > maxHostileAlloc {
		t.Fatalf("nesting cost %d bytes", n)
	}
	owner := dial(t, ts.url, peer.Options{})
	if _, err := owner.Share(ctxT(t), "doc", newDoc()); err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, ts.url)
	ours, _ := r.join(1, "doc")
	for i, depth := range []int{9, 100_000} {
		seq := uint64(i + 1)
		r.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: seq, Commits: [][]byte{deep(depth)}})
		if rs := r.expectRefused(ours, seq); rs[0].Code != string(protocol.NestingTooDeep) {
			t.Errorf("depth %d refused with %+v, want nesting-too-deep", depth, rs)
		}
	}
}

func bytesOf(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

// rootOf is a fresh object root for an open.
func rootOf() *frame.Root { return &frame.Root{ID: commit.NewID(), Kind: commit.Object} }

// countFrames reads r in the background until the socket ends, counting
// frames by kind and fault reason. wait blocks until cond holds over the
// counts so far.
type frameCounter struct {
	mu     sync.Mutex
	cond   *sync.Cond
	kinds  map[frame.Kind]int
	faults map[string]int
	done   bool
	err    error
}

func countFrames(t *testing.T, ws *websocket.Conn) *frameCounter {
	fc := &frameCounter{kinds: map[frame.Kind]int{}, faults: map[string]int{}}
	fc.cond = sync.NewCond(&fc.mu)
	ctx, cancel := context.WithCancel(context.Background())
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			_, b, err := ws.Read(ctx)
			fc.mu.Lock()
			if err == nil {
				var f frame.Frame
				if f, err = frame.Decode(b); err == nil {
					fc.kinds[f.Kind]++
					if f.Kind == frame.Fault {
						fc.faults[f.Reason]++
					}
				}
			}
			if err != nil {
				fc.done, fc.err = true, err
			}
			fc.cond.Broadcast()
			fc.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		ws.CloseNow()
		<-finished
	})
	return fc
}

// wait blocks until cond holds, failing if the socket ends first or 60 s
// pass.
func (fc *frameCounter) wait(t *testing.T, what string, cond func(kinds map[frame.Kind]int, faults map[string]int) bool) {
	t.Helper()
	timer := time.AfterFunc(60*time.Second, func() {
		fc.mu.Lock()
		fc.done, fc.err = true, fmt.Errorf("timed out")
		fc.cond.Broadcast()
		fc.mu.Unlock()
	})
	defer timer.Stop()
	fc.mu.Lock()
	defer fc.mu.Unlock()
	for !cond(fc.kinds, fc.faults) {
		if fc.done {
			t.Fatalf("%s: socket ended (%v) with %v and faults %v", what, fc.err, fc.kinds, fc.faults)
		}
		fc.cond.Wait()
	}
}

// 100,000 topics opened on one link: the first MaxTopicsPerLink are
// served, every other is answered fault too-many-topics on its own number,
// the link itself carries on, and the gateway goes on serving other peers.
func TestHundredThousandTopicsOnOneLink(t *testing.T) {
	// The creations never get their states; they must outlive the test.
	ts := startGateway(t, gateway.Config{StateTimeout: time.Hour})
	ws, _, err := websocket.Dial(ctxT(t), ts.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	fc := countFrames(t, ws)
	const total = 100_000
	max := gateway.DefaultMaxTopicsPerLink
	for i := 1; i <= total; i++ {
		b, err := frame.Encode(frame.Frame{Kind: frame.Open, Topic: uint64(i), Name: fmt.Sprintf("t%d", i), Root: rootOf()})
		if err != nil {
			t.Fatal(err)
		}
		if err := ws.Write(ctxT(t), websocket.MessageBinary, b); err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
	}
	fc.wait(t, "answers", func(k map[frame.Kind]int, f map[string]int) bool {
		return k[frame.Open] == max && f[string(protocol.TooManyTopics)] == total-max
	})
	if len(fc.faults) != 1 {
		t.Fatalf("faults %v, want only too-many-topics", fc.faults)
	}
	// Others are served meanwhile.
	a := dial(t, ts.url, peer.Options{})
	da, err := a.Share(ctxT(t), "other", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	b := dial(t, ts.url, peer.Options{})
	db, err := b.Join(ctxT(t), "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set(da, "k", text("v")); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, db, 1)
	if got := len(ts.Documents(ctxT(t))); got != max+1 {
		t.Fatalf("%d documents in memory, want %d", got, max+1)
	}
}

// A flood of opens of new names is bounded by MaxDocuments: past it each
// is answered fault too-many-documents, a document already open goes on
// working, and once the flood's documents unload new ones open again.
func TestOpenFloodIsBoundedByMaxDocuments(t *testing.T) {
	const max = 50
	ts := startGateway(t, gateway.Config{MaxDocuments: max, MaxTopicsPerLink: 10_000, IdleUnload: 20 * time.Millisecond})
	a := dial(t, ts.url, peer.Options{})
	da, err := a.Share(ctxT(t), "kept", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	b := dial(t, ts.url, peer.Options{})
	db, err := b.Join(ctxT(t), "kept")
	if err != nil {
		t.Fatal(err)
	}
	ws, _, err := websocket.Dial(ctxT(t), ts.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	fc := countFrames(t, ws)
	const flood = 5000
	for i := 1; i <= flood; i++ {
		b, _ := frame.Encode(frame.Frame{Kind: frame.Open, Topic: uint64(i), Name: fmt.Sprintf("flood%d", i), Root: rootOf()})
		if err := ws.Write(ctxT(t), websocket.MessageBinary, b); err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
	}
	fc.wait(t, "answers", func(k map[frame.Kind]int, f map[string]int) bool {
		return k[frame.Open] == max-1 && f[string(gateway.ReasonTooManyDocuments)] == flood-(max-1)
	})
	if _, err := set(da, "still", text("here")); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, db, 1)
	c := dial(t, ts.url, peer.Options{})
	if _, err := c.Share(ctxT(t), "fresh", newDoc()); protocol.ReasonOf(err) != gateway.ReasonTooManyDocuments {
		t.Fatalf("share while full: %v, want too-many-documents", err)
	}
	ws.Close(websocket.StatusNormalClosure, "")
	eventually(t, "the flood's documents to unload", func() bool { return len(ts.Documents(context.Background())) == 1 })
	if _, err := c.Share(ctxT(t), "fresh", newDoc()); err != nil {
		t.Fatalf("share after the flood: %v", err)
	}
}

// A peer that asks for a large state over and over and never reads is ended
// with slow-consumer: what it asks for is not queued without bound.
func TestStateRequestFloodWithoutReading(t *testing.T) {
	ts := startGateway(t, gateway.Config{MaxPendingBytes: 1 << 20, WriteTimeout: 200 * time.Millisecond})
	owner := dial(t, ts.url, peer.Options{})
	od, err := owner.Share(ctxT(t), "big", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := set(od, key(0, i), text(strings.Repeat("x", 60<<10))); err != nil {
			t.Fatal(err)
		}
	}
	waitCursor(t, ts.Server, "big", 4)
	r := dialRaw(t, ts.url)
	_, root, _ := r.joinRoot(1, "big")
	again, _ := frame.Encode(frame.Frame{Kind: frame.Open, Topic: 1, Name: "big", Root: root, Want: true})
	n := allocated(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for i := 0; ; i++ {
			if err := r.ws.Write(ctx, websocket.MessageBinary, again); err != nil {
				if ctx.Err() != nil {
					t.Fatalf("still writing after %d re-opens", i)
				}
				break
			}
		}
		eventually(t, "slow-consumer", func() bool { return ts.Metrics().SlowConsumers.Load() == 1 })
	})
	t.Logf("allocated %d bytes", n)
	if n > 128<<20 {
		t.Fatalf("the flood cost %d bytes", n)
	}
	waitForLinks(t, ts.Server, "big", 1)
}

// A name that is not UTF-8 is not a text value: the link ends without a
// word. A name the store cannot hold (empty, or longer than MaxNameBytes)
// is answered on its topic with a named, short fault and the link carries
// on; a name larger than a message closes the socket with 1009.
func TestHostileNames(t *testing.T) {
	logs := &syncBuffer{}
	ts := startGateway(t, gateway.Config{Logger: jsonLogger(logs)})
	// open [0, 1, "b\xc3(", null, null, true], written by hand.
	r := dialRaw(t, ts.url)
	r.sendBytes(unhex(t, "8600016362c328f6f6f5"))
	if s := r.expectClosed(); s != websocket.StatusUnsupportedData {
		t.Errorf("non-UTF-8 name: closed with %v, want 1003", s)
	}
	// The longest name the store holds is served.
	longest := strings.Repeat("n", store.MaxNameBytes)
	owner := dial(t, ts.url, peer.Options{})
	if _, err := owner.Share(ctxT(t), longest, newDoc()); err != nil {
		t.Fatalf("a %d-byte name: %v", len(longest), err)
	}
	for _, size := range []int{0, store.MaxNameBytes + 1, 1<<20 - 64} {
		r := dialRaw(t, ts.url)
		r.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: strings.Repeat("n", size), Root: rootOf()})
		f := r.next()
		if f.Kind != frame.Fault || f.Topic != 1 || f.Reason != string(gateway.ReasonBadName) {
			t.Errorf("a %d-byte name: got %v topic %d %q (%.80s), want fault %s on topic 1", size, f.Kind, f.Topic, f.Reason, f.Message, gateway.ReasonBadName)
		}
		if len(f.Message) > 256 {
			t.Errorf("a %d-byte name is answered with a %d-byte message", size, len(f.Message))
		}
		r.join(2, longest) // the link carries on
	}
	if n := logs.Len(); n > 64<<10 {
		t.Errorf("huge names wrote %d bytes of logs", n)
	}
	r = dialRaw(t, ts.url)
	r.sendBytes(append(unhex(t, "860001"+"7a00100000"), []byte(strings.Repeat("n", 1<<20))...))
	if s := r.expectClosed(); s != websocket.StatusMessageTooBig {
		t.Errorf("a name past the message limit: closed with %v, want 1009", s)
	}
}

// A message past MaxMessageBytes closes the socket with 1009, binary or
// text, whole or in fragments, without the gateway reading it all; one of
// exactly the limit is read (and judged on what it says).
func TestOversizeMessagesClose1009(t *testing.T) {
	const limit = 64 << 10
	ts := startGateway(t, gateway.Config{MaxMessageBytes: limit})
	cases := []struct {
		name string
		typ  websocket.MessageType
		size int
		want websocket.StatusCode
	}{
		{"binary at the limit", websocket.MessageBinary, limit, websocket.StatusUnsupportedData},
		{"binary past the limit", websocket.MessageBinary, limit + 1, websocket.StatusMessageTooBig},
		{"text at the limit", websocket.MessageText, limit, websocket.StatusUnsupportedData},
		{"text past the limit", websocket.MessageText, limit + 1, websocket.StatusMessageTooBig},
		{"binary of 64 MiB", websocket.MessageBinary, 64 << 20, websocket.StatusMessageTooBig},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := dialRaw(t, ts.url)
			// 0xff is a break code outside an indefinite item, never a
			// frame; x is UTF-8 and never JSON.
			msg := bytesOf(0xff, c.size)
			if c.typ == websocket.MessageText {
				msg = bytesOf('x', c.size)
			}
			n := allocated(func() {
				// The gateway may close before the last byte is written: read
				// while writing, so its close frame is taken before the socket
				// is torn down under a write that has not finished (on a
				// loaded host a 64 MiB write outlasts the close handshake).
				wrote := make(chan struct{})
				go func() {
					defer close(wrote)
					r.ws.Write(context.Background(), c.typ, msg)
				}()
				if s := r.expectClosed(); s != c.want {
					t.Errorf("closed with %v, want %v", s, c.want)
				}
				r.ws.CloseNow()
				<-wrote
			})
			if c.size > limit && n > uint64(c.size)+maxHostileAlloc {
				t.Errorf("allocated %d bytes for a %d-byte message", n, c.size)
			}
		})
	}
	// In fragments: 4 KiB frames adding up past the limit.
	r := dialRaw(t, ts.url)
	w, err := r.ws.Writer(ctxT(t), websocket.MessageBinary)
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytesOf(0xff, 4<<10)
	for i := 0; i < 2*limit/len(chunk); i++ {
		if _, err := w.Write(chunk); err != nil {
			break // the gateway closed first
		}
	}
	w.Close()
	if s := r.expectClosed(); s != websocket.StatusMessageTooBig {
		t.Errorf("fragmented: closed with %v, want 1009", s)
	}
}

// Text that is not a request-channel message closes the socket (1003),
// and text that is not UTF-8 fails the connection (1007, RFC 6455 section
// 8.1, as the JS server's ws does); a well-formed answer nobody waits for
// is dropped and the link carries on.
func TestTextThatIsNotARequestCloses(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	cases := []struct {
		text string
		want websocket.StatusCode
	}{
		{"not json", websocket.StatusUnsupportedData},
		{"", websocket.StatusUnsupportedData},
		{"[1,2]", websocket.StatusUnsupportedData},
		{`"text"`, websocket.StatusUnsupportedData},
		{"null", websocket.StatusUnsupportedData},
		{"{}", websocket.StatusUnsupportedData},
		{`{"id":1}`, websocket.StatusUnsupportedData},
		{`{"id":"1","name":"x"}`, websocket.StatusUnsupportedData},
		{`{"id":1.5,"name":"x"}`, websocket.StatusUnsupportedData},
		{`{"id":9007199254740993,"name":"x"}`, websocket.StatusUnsupportedData},
		{`{"id":1,"name":7}`, websocket.StatusUnsupportedData},
		{`{"id":1,"name":"x"`, websocket.StatusUnsupportedData},
		{strings.Repeat("[", 100_000), websocket.StatusUnsupportedData},
		{"{\"id\":1,\"name\":\"\xc3(\"}", websocket.StatusInvalidFramePayloadData},
		{"\xff\xfe", websocket.StatusInvalidFramePayloadData},
	}
	for _, c := range cases {
		r := dialRaw(t, ts.url)
		if err := r.ws.Write(ctxT(t), websocket.MessageText, []byte(c.text)); err != nil {
			t.Fatal(err)
		}
		// Whatever comes back first must be the close: an answer means
		// the text was taken as a request.
		typ, b, err := r.ws.Read(ctxT(t))
		if err == nil {
			t.Errorf("%.40q: answered %s %.80q, want the socket closed with %v", c.text, typ, b, c.want)
			continue
		}
		if s := websocket.CloseStatus(err); s != c.want {
			t.Errorf("%.40q: closed with %v (%v), want %v", c.text, s, err, c.want)
		}
	}
	r := dialRaw(t, ts.url)
	if err := r.ws.Write(ctxT(t), websocket.MessageText, []byte(`{"id":5,"result":"nobody asked"}`)); err != nil {
		t.Fatal(err)
	}
	r.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "nothing", Want: true})
	r.expectFault(1, protocol.NoDocument)
}

// Requests past the request channel's bound are answered busy at once, and
// the socket keeps serving frames.
func TestRequestFloodIsAnsweredBusy(t *testing.T) {
	release := make(chan struct{})
	var running atomic.Int64
	calls := requests.CallsFunc(func(ctx context.Context, _ requests.Call, _ func(json.RawMessage)) (json.RawMessage, error) {
		running.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return json.RawMessage(`1`), nil
	})
	ts := startGateway(t, gateway.Config{Calls: calls})
	t.Cleanup(func() { close(release) })
	ws, _, err := websocket.Dial(ctxT(t), ts.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	const n = 500
	for i := 1; i <= n; i++ {
		if err := ws.Write(ctxT(t), websocket.MessageText, fmt.Appendf(nil, `{"id":%d,"name":"slow","args":null}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n-requests.DefaultMaxInFlight; i++ {
		typ, b, err := ws.Read(ctxT(t))
		if err != nil || typ != websocket.MessageText || !strings.Contains(string(b), `"reason":"busy"`) {
			t.Fatalf("answer %d: %s %s %v, want busy", i, typ, b, err)
		}
	}
	eventually(t, "the held calls", func() bool { return running.Load() == requests.DefaultMaxInFlight })
	r := &rawPeer{t: t, ws: ws}
	r.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "nothing", Want: true})
	r.expectFault(1, protocol.NoDocument)
}

// Many sockets from one address: past the rate limit each handshake is
// refused 429 limit with Retry-After and no socket opens; forged
// X-Forwarded-For does not escape it; the admitted sockets keep working.
func TestManySocketsFromOneAddress(t *testing.T) {
	const limit = 20
	ts := startGateway(t, gateway.Config{Admission: admission.Config{Limit: limit, Window: time.Hour}})
	type result struct {
		p   *peer.Peer
		err error
	}
	out := make(chan result)
	const tries = 60
	for i := range tries {
		go func() {
			h := http.Header{"X-Forwarded-For": {fmt.Sprintf("10.0.0.%d", i)}}
			p, err := peer.Dial(ctxT(t), ts.url, peer.Options{Header: h})
			out <- result{p, err}
		}()
	}
	var admitted []*peer.Peer
	for range tries {
		r := <-out
		if r.err == nil {
			admitted = append(admitted, r.p)
			t.Cleanup(func() { r.p.Close() })
			continue
		}
		var he *peer.HandshakeError
		if !errors.As(r.err, &he) || he.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(he.Body), `"code":"limit"`) || he.Header.Get("Retry-After") == "" {
			t.Errorf("refusal %v, want 429 limit with Retry-After", r.err)
		}
	}
	if len(admitted) != limit {
		t.Fatalf("%d sockets admitted, want %d", len(admitted), limit)
	}
	// The server counts a socket just after the client sees the upgrade.
	eventually(t, "the admitted connections", func() bool { return ts.Metrics().Connections.Load() == limit })
	if got := ts.Metrics().ConnsTotal.Load(); got != limit {
		t.Fatalf("%d sockets opened, want %d", got, limit)
	}
	da, err := admitted[0].Share(ctxT(t), "doc", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	db, err := admitted[limit-1].Join(ctxT(t), "doc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set(da, "k", text("v")); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, db, 1)
}

// Handshakes with origins that are not the gateway's own host, nor in the
// allow-list, are refused 403 origin and no socket opens; the same host, an
// allowed origin and no Origin at all pass.
func TestHandshakesWithBadOrigins(t *testing.T) {
	ts := startGateway(t, gateway.Config{Admission: admission.Config{AllowedOrigins: []string{"https://app.example"}}})
	host := strings.TrimPrefix(ts.http.URL, "http://")
	bad := [][]string{
		{"https://evil.example"}, {"null"}, {""}, {"http://" + host + ".evil.example"},
		{"http://" + host + "/path"}, {"http://user@" + host}, {"http://" + host + "#x"},
		{"http://" + host + "?q"}, {"javascript:alert(1)"}, {"https://app.example.evil"},
		{"http://app.example"}, {"https://app.example:444"}, {"http://" + host, "https://evil.example"},
		{"http://" + host + ":"}, {"http://" + strings.Split(host, ":")[0] + ":1"},
		{strings.Repeat("a", 8<<10)},
	}
	for _, o := range bad {
		_, err := peer.Dial(ctxT(t), ts.url, peer.Options{Header: http.Header{"Origin": o}})
		var he *peer.HandshakeError
		if !errors.As(err, &he) || he.StatusCode != http.StatusForbidden || !strings.Contains(string(he.Body), `"code":"origin"`) {
			t.Errorf("origin %.60q: %v, want 403 origin", o, err)
		}
	}
	if n := ts.Metrics().ConnsTotal.Load(); n != 0 {
		t.Fatalf("%d sockets opened for refused origins", n)
	}
	for _, o := range [][]string{nil, {"http://" + host}, {"HTTP://" + strings.ToUpper(host)}, {"https://app.example"}, {"https://APP.example"}} {
		p, err := peer.Dial(ctxT(t), ts.url, peer.Options{Header: http.Header{"Origin": o}})
		if err != nil {
			t.Errorf("origin %q: %v, want admitted", o, err)
			continue
		}
		p.Close()
	}
}
