package peer_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every blocking step of a test, so a bug fails instead of
// hanging; nothing waits on it to synchronise.
const wait = 10 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

var (
	rootID  = commit.ID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	childID = commit.ID{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}
	board   = &frame.Root{ID: rootID, Kind: commit.Object}
)

func set(key string, v commit.Value) commit.Delta {
	return commit.Delta{Op: commit.Add, ID: rootID, Ref: commit.ObjectKey(key), Value: v}
}

func replace(key string, v commit.Value) commit.Delta {
	return commit.Delta{Op: commit.Replace, ID: rootID, Ref: commit.ObjectKey(key), Value: v}
}

func encode(t *testing.T, ds ...commit.Delta) []byte {
	t.Helper()
	b, err := commit.Encode(commit.Commit{Deltas: ds})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// planDoc is a document holding {"title": "plan"}.
func planDoc(t *testing.T) *document.Document {
	t.Helper()
	d := document.New(rootID, commit.Object, document.Limits{})
	if _, err := d.Apply(commit.Commit{Deltas: []commit.Delta{set("title", commit.TextValue("plan"))}}); err != nil {
		t.Fatal(err)
	}
	return d
}

// scriptServer accepts WebSockets and hands each to the test as an end it
// scripts frame by frame.
type scriptServer struct {
	srv   *httptest.Server
	ends  chan *end
	hdr   chan http.Header
	limit int64
}

func newScript(t *testing.T) *scriptServer {
	s := &scriptServer{ends: make(chan *end, 4), hdr: make(chan http.Header, 4), limit: 1 << 20}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hdr <- r.Header.Clone()
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.SetReadLimit(s.limit)
		s.ends <- newEnd(t, c)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *scriptServer) url() string { return "ws" + strings.TrimPrefix(s.srv.URL, "http") }

// dial connects a peer and returns it with the server's end of its socket.
func (s *scriptServer) dial(t *testing.T, opts peer.Options) (*peer.Peer, *end) {
	t.Helper()
	p, err := peer.Dial(testCtx(t), s.url(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	select {
	case e := <-s.ends:
		return p, e
	case <-time.After(wait):
		t.Fatal("the server saw no connection")
		return nil, nil
	}
}

// end is the server's side of one socket. Like a real server it reads all
// the time (so a close handshake completes at once); recv takes what it
// read, in order.
type end struct {
	t      *testing.T
	c      *websocket.Conn
	msgs   chan message
	status websocket.StatusCode // the socket's close status, once msgs is closed
	gone   chan struct{}
}

type message struct {
	typ websocket.MessageType
	b   []byte
}

func newEnd(t *testing.T, c *websocket.Conn) *end {
	e := &end{t: t, c: c, msgs: make(chan message, 64), gone: make(chan struct{})}
	go func() {
		defer close(e.gone)
		defer close(e.msgs)
		for {
			typ, b, err := c.Read(context.Background())
			if err != nil {
				e.status = websocket.CloseStatus(err)
				return
			}
			e.msgs <- message{typ, b}
		}
	}()
	t.Cleanup(func() {
		c.CloseNow()
		for range e.msgs {
		}
		<-e.gone
	})
	return e
}

func (e *end) send(f frame.Frame) {
	e.t.Helper()
	b, err := frame.Encode(f)
	if err != nil {
		e.t.Fatal(err)
	}
	e.sendRaw(b)
}

func (e *end) sendRaw(b []byte) {
	e.t.Helper()
	if err := e.c.Write(testCtx(e.t), websocket.MessageBinary, b); err != nil {
		e.t.Fatal(err)
	}
}

func (e *end) recv() frame.Frame {
	e.t.Helper()
	var m message
	var ok bool
	select {
	case m, ok = <-e.msgs:
	case <-time.After(wait):
		e.t.Fatal("the peer sent nothing")
	}
	if !ok {
		e.t.Fatalf("the socket closed (%d) before a frame", e.status)
	}
	if m.typ != websocket.MessageBinary {
		e.t.Fatalf("peer sent a %v message", m.typ)
	}
	f, err := frame.Decode(m.b)
	if err != nil {
		e.t.Fatalf("peer sent %x, which is not a frame: %v", m.b, err)
	}
	return f
}

// closed waits for the socket to end and returns its close status; it
// fails on any frame still to come.
func (e *end) closed() websocket.StatusCode {
	e.t.Helper()
	for {
		select {
		case m, ok := <-e.msgs:
			if !ok {
				return e.status
			}
			e.t.Errorf("frame %x before the close", m.b)
		case <-time.After(wait):
			e.t.Fatal("the socket stayed open")
		}
	}
}

// joined runs the server's half of a Join of name with root and state:
// it reads the peer's open and answers open and state. It returns the
// peer's topic number.
func (e *end) joined(name string, root *frame.Root, state []byte) uint64 {
	e.t.Helper()
	f := e.recv()
	if f.Kind != frame.Open || f.Name != name || f.Root != nil || !f.Want {
		e.t.Fatalf("peer's first frame = %+v, want open of %q with no root and want", f, name)
	}
	e.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: name, Root: root})
	e.send(frame.Frame{Kind: frame.State, Topic: 1, State: state})
	return f.Topic
}

// join dials and joins "board" holding {"title": "plan"} on the server.
func (s *scriptServer) join(t *testing.T, opts peer.Options) (*peer.Peer, *end, *peer.Doc) {
	t.Helper()
	p, e := s.dial(t, opts)
	type res struct {
		d   *peer.Doc
		err error
	}
	ch := make(chan res, 1)
	go func() {
		d, err := p.Join(testCtx(t), "board")
		ch <- res{d, err}
	}()
	e.joined("board", board, encode(t, set("title", commit.TextValue("plan"))))
	r := <-ch
	if r.err != nil {
		t.Fatalf("Join: %v", r.err)
	}
	return p, e, r.d
}

// next returns the Doc's next event.
func next(t *testing.T, d *peer.Doc) peer.Event {
	t.Helper()
	select {
	case ev, ok := <-d.Events():
		if !ok {
			t.Fatalf("events closed: %v", d.Err())
		}
		return ev
	case <-time.After(wait):
		t.Fatal("no event")
		return nil
	}
}

// relay pairs sockets two by two and copies every message between them, so
// two peers talk as if directly.
type relay struct {
	srv  *httptest.Server
	mu   sync.Mutex
	wait *websocket.Conn
	pair chan *websocket.Conn
	wg   sync.WaitGroup
}

func newRelay(t *testing.T) *relay {
	r := &relay{pair: make(chan *websocket.Conn, 1)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		c, err := websocket.Accept(w, req, nil)
		if err != nil {
			return
		}
		c.SetReadLimit(1 << 20)
		r.mu.Lock()
		first := r.wait == nil
		other := r.wait
		if first {
			r.wait = c
		} else {
			r.wait = nil
		}
		r.mu.Unlock()
		if first {
			other = <-r.pair
		} else {
			r.pair <- c
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.copy(c, other)
		}()
	}))
	t.Cleanup(func() {
		r.srv.Close()
		r.wg.Wait()
	})
	return r
}

// copy forwards from→to until from ends, then closes to with from's status.
func (r *relay) copy(from, to *websocket.Conn) {
	ctx := context.Background()
	for {
		typ, b, err := from.Read(ctx)
		if err != nil {
			code := websocket.CloseStatus(err)
			if code == -1 {
				to.CloseNow()
			} else {
				to.Close(code, "")
			}
			from.CloseNow()
			return
		}
		if err := to.Write(ctx, typ, b); err != nil {
			from.CloseNow()
			return
		}
	}
}

func (r *relay) url() string { return "ws" + strings.TrimPrefix(r.srv.URL, "http") }
