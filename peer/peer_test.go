package peer_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
	"github.com/weftgate/weftgate/protocol/link"
)

func TestJoinBuildsReplicaFromState(t *testing.T) {
	s := newScript(t)
	hdr := http.Header{"Cookie": {"session=abc"}}
	p, e, d := s.join(t, peer.Options{Header: hdr})
	if got := (<-s.hdr).Get("Cookie"); got != "session=abc" {
		t.Errorf("handshake Cookie = %q", got)
	}
	if d.Name() != "board" || d.Topic() != 1 {
		t.Errorf("Doc is %q topic %d", d.Name(), d.Topic())
	}
	if id, kind := d.Root(); id != rootID || kind != commit.Object {
		t.Errorf("root %v %v, want the server's", id, kind)
	}
	js, err := d.JSON()
	if err != nil || string(js) != `{"title":"plan"}` {
		t.Fatalf("JSON = %s, %v", js, err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if code := e.closed(); code != websocket.StatusNormalClosure {
		t.Errorf("close status %d, want 1000", code)
	}
	if !errors.Is(d.Err(), peer.ErrClosed) {
		t.Errorf("Doc.Err = %v, want ErrClosed", d.Err())
	}
	if ev := next(t, d); !reflect.DeepEqual(ev, peer.Ended{Reason: link.Closed, Message: "closed by this end"}) {
		t.Errorf("last event %#v", ev)
	}
	if _, ok := <-d.Events(); ok {
		t.Error("events stay open after Ended")
	}
	// The replica outlives the link.
	if js, _ := d.JSON(); string(js) != `{"title":"plan"}` {
		t.Errorf("JSON after close = %s", js)
	}
	if _, err := d.Commit(set("x", commit.NullValue())); !errors.Is(err, peer.ErrClosed) {
		t.Errorf("Commit after Close = %v, want ErrClosed", err)
	}
}

func TestCommitsBothWays(t *testing.T) {
	s := newScript(t)
	_, e, d := s.join(t, peer.Options{})

	// A commit from the server is applied and reported.
	c1 := commit.Commit{Deltas: []commit.Delta{set("n", commit.IntValue(1))}}
	e.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{encode(t, c1.Deltas...)}})
	ev := next(t, d)
	if a, ok := ev.(peer.Applied); !ok || a.Seq != 1 || !reflect.DeepEqual(a.Commit, c1) {
		t.Fatalf("event %#v, want Applied seq 1 %v", ev, c1)
	}
	if js, _ := d.JSON(); string(js) != `{"n":1,"title":"plan"}` {
		t.Errorf("JSON = %s", js)
	}

	// Our commit is applied here and sent, numbered from 1.
	seq, err := d.Commit(replace("title", commit.TextValue("done")))
	if err != nil || seq != 1 {
		t.Fatalf("Commit = %d, %v", seq, err)
	}
	want := encode(t, replace("title", commit.TextValue("done")))
	f := e.recv()
	if f.Kind != frame.Commits || f.Topic != d.Topic() || f.First != 1 || len(f.Commits) != 1 || !bytes.Equal(f.Commits[0], want) {
		t.Fatalf("server got %+v, want commits first 1 [%x]", f, want)
	}

	// The server refuses it: reported with the commit and its undo.
	reasons := []frame.Reason{{Code: "not-here", Message: "read only", Path: []string{"title"}}}
	e.send(frame.Frame{Kind: frame.Refused, Topic: 1, Seq: 1, Reasons: reasons})
	ev = next(t, d)
	r, ok := ev.(peer.Refused)
	if !ok || !r.Mine || r.Seq != 1 || !reflect.DeepEqual(r.Reasons, reasons) || !bytes.Equal(r.Commit, want) {
		t.Fatalf("event %#v, want our refusal of seq 1", ev)
	}
	undo, err := commit.Decode(r.Undo)
	if err != nil || !reflect.DeepEqual(undo.Deltas, []commit.Delta{replace("title", commit.TextValue("plan"))}) {
		t.Fatalf("undo %v, %v", undo, err)
	}
	// Nothing rolled back; yielding is committing the undo.
	if _, err := d.Commit(undo.Deltas...); err != nil {
		t.Fatal(err)
	}
	if f := e.recv(); f.Kind != frame.Commits || f.First != 2 {
		t.Fatalf("server got %+v, want commits first 2", f)
	}
	if js, _ := d.JSON(); string(js) != `{"n":1,"title":"plan"}` {
		t.Errorf("JSON after yielding = %s", js)
	}
}

func TestRefusesWhatDoesNotApply(t *testing.T) {
	s := newScript(t)
	opts := peer.Options{Accept: func(name string, doc *document.Document, c commit.Commit) []frame.Reason {
		if v, _ := doc.Get(rootID, commit.ObjectKey("title")); v != commit.TextValue("plan") {
			return []frame.Reason{{Code: "wrong-doc", Message: "Accept sees the replica"}}
		}
		if c.Deltas[0].Ref.Key == "secret" {
			return []frame.Reason{{Code: "forbidden", Message: name + " has no secrets"}}
		}
		return nil
	}}
	_, e, d := s.join(t, opts)
	missing := encode(t, replace("gone", commit.TextValue("x")))
	notACommit := []byte{0x81, 0x80} // empty-commit
	secret := encode(t, set("secret", commit.BoolValue(true)))
	good := encode(t, set("ok", commit.BoolValue(true)))
	e.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 7, Commits: [][]byte{missing, notACommit, secret, good}})

	for i, want := range []struct {
		seq  uint64
		code string
	}{{7, string(protocol.SlotMissing)}, {8, string(protocol.EmptyCommit)}, {9, "forbidden"}} {
		f := e.recv()
		if f.Kind != frame.Refused || f.Topic != d.Topic() || f.Seq != want.seq || f.Reasons[0].Code != want.code {
			t.Fatalf("refusal %d: server got %+v, want refused seq %d %s", i, f, want.seq, want.code)
		}
		ev := next(t, d)
		if r, ok := ev.(peer.Refused); !ok || r.Mine || r.Seq != want.seq || r.Reasons[0].Code != want.code {
			t.Fatalf("event %#v, want our refusal of their seq %d", ev, want.seq)
		}
	}
	if ev := next(t, d); reflect.TypeOf(ev) != reflect.TypeOf(peer.Applied{}) || ev.(peer.Applied).Seq != 10 {
		t.Fatalf("event %#v, want Applied seq 10: a refusal never stops the frame", ev)
	}
	if js, _ := d.JSON(); string(js) != `{"ok":true,"title":"plan"}` {
		t.Errorf("JSON = %s", js)
	}
}

func TestRefusalCarriesPath(t *testing.T) {
	s := newScript(t)
	_, e, d := s.join(t, peer.Options{})
	// An object attached under "child", then an add over an existing slot in it.
	attach := commit.Delta{Op: commit.Add, ID: rootID, Ref: commit.ObjectKey("child"),
		Value: commit.RefTo(commit.Reference{Edge: commit.Attach, Kind: commit.Object, ID: childID})}
	inChild := commit.Delta{Op: commit.Add, ID: childID, Ref: commit.ObjectKey("k"), Value: commit.IntValue(1)}
	e.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{
		encode(t, attach, inChild), encode(t, inChild),
	}})
	f := e.recv()
	if f.Kind != frame.Refused || f.Seq != 2 || f.Reasons[0].Code != string(protocol.SlotExists) ||
		!reflect.DeepEqual(f.Reasons[0].Path, []string{"child", "k"}) {
		t.Fatalf("server got %+v, want slot-exists at child/k", f)
	}
	if js, _ := d.JSON(); string(js) != `{"child":{"k":1},"title":"plan"}` {
		t.Errorf("JSON = %s", js)
	}
}

func TestJoinNothingThere(t *testing.T) {
	s := newScript(t)
	p, e := s.dial(t, peer.Options{})
	errc := make(chan error, 1)
	go func() {
		_, err := p.Join(testCtx(t), "empty")
		errc <- err
	}()
	if f := e.recv(); f.Kind != frame.Open || f.Root != nil {
		t.Fatalf("server got %+v", f)
	}
	// The server holds nothing either.
	e.send(frame.Frame{Kind: frame.Open, Topic: 3, Name: "empty", Want: true})
	err := <-errc
	if protocol.ReasonOf(err) != protocol.NoDocument {
		t.Fatalf("Join = %v, want no-document", err)
	}
	if g := e.recv(); g.Kind != frame.Fault || g.Topic != 3 || g.Reason != string(protocol.NoDocument) {
		t.Fatalf("server got %+v, want fault no-document on its topic 3", g)
	}
	// The link carries on.
	go func() {
		_, err := p.Join(testCtx(t), "board")
		errc <- err
	}()
	e.joined("board", board, nil)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func TestJoinGivesUpWithContext(t *testing.T) {
	s := newScript(t)
	p, e := s.dial(t, peer.Options{})
	ctx, cancel := context.WithCancel(testCtx(t))
	errc := make(chan error, 1)
	go func() {
		_, err := p.Join(ctx, "slow")
		errc <- err
	}()
	if f := e.recv(); f.Kind != frame.Open {
		t.Fatalf("server got %+v", f)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Join = %v, want context.Canceled", err)
	}
	if f := e.recv(); f.Kind != frame.Leave || f.Topic != 1 {
		t.Fatalf("server got %+v, want leave of topic 1", f)
	}
}

func TestJoinTakesEarlierOffer(t *testing.T) {
	s := newScript(t)
	p, e := s.dial(t, peer.Options{})
	// The server shares first (its hooks run at the handshake); the link
	// holds the offer until the program joins.
	e.send(frame.Frame{Kind: frame.Open, Topic: 5, Name: "state", Root: &frame.Root{ID: childID, Kind: commit.Map}})
	// A fault about an unknown topic is the barrier that says the open was taken.
	e.send(frame.Frame{Kind: frame.Leave, Topic: 99})
	if f := e.recv(); f.Kind != frame.Fault || f.Topic != 99 || f.Reason != string(protocol.NoTopic) {
		t.Fatalf("server got %+v", f)
	}
	errc := make(chan error, 1)
	var d *peer.Doc
	go func() {
		var err error
		d, err = p.Join(testCtx(t), "state")
		errc <- err
	}()
	if f := e.recv(); f.Kind != frame.Open || f.Name != "state" || !f.Want {
		t.Fatalf("server got %+v", f)
	}
	e.send(frame.Frame{Kind: frame.State, Topic: 5})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if id, kind := d.Root(); id != childID || kind != commit.Map {
		t.Errorf("root %v %v, want the offer's", id, kind)
	}
	if js, _ := d.JSON(); string(js) != `{}` {
		t.Errorf("JSON = %s", js)
	}
}

func TestShareAnswersWant(t *testing.T) {
	s := newScript(t)
	p, e := s.dial(t, peer.Options{})
	doc := planDoc(t)
	wantState := encode(t, set("title", commit.TextValue("plan")))
	done := make(chan error, 1)
	var d *peer.Doc
	go func() {
		var err error
		d, err = p.Share(testCtx(t), "board", doc)
		done <- err
	}()
	f := e.recv()
	if f.Kind != frame.Open || f.Name != "board" || f.Root == nil || *f.Root != *board || f.Want {
		t.Fatalf("server got %+v, want open with root and no want", f)
	}
	// A server that holds nothing mints from the root and asks.
	e.send(frame.Frame{Kind: frame.Open, Topic: 2, Name: "board", Root: board, Want: true})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	f = e.recv()
	if f.Kind != frame.State || f.Topic != d.Topic() || !bytes.Equal(f.State, wantState) {
		t.Fatalf("server got %+v, want state %x", f, wantState)
	}
	// A resync from the server is answered with the state as it is now.
	if _, err := d.Commit(set("v", commit.IntValue(2))); err != nil {
		t.Fatal(err)
	}
	e.send(frame.Frame{Kind: frame.Open, Topic: 2, Name: "board", Root: board, Want: true})
	if f := e.recv(); f.Kind != frame.Commits {
		t.Fatalf("server got %+v, want the commit first", f)
	}
	f = e.recv()
	if want := encode(t, set("title", commit.TextValue("plan")), set("v", commit.IntValue(2))); f.Kind != frame.State || !bytes.Equal(f.State, want) {
		t.Fatalf("server got %+v, want state %x", f, want)
	}
}

func TestShareRootMismatch(t *testing.T) {
	s := newScript(t)
	p, e := s.dial(t, peer.Options{})
	done := make(chan error, 1)
	go func() {
		_, err := p.Share(testCtx(t), "board", planDoc(t))
		done <- err
	}()
	e.recv()
	e.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "board", Root: &frame.Root{ID: childID, Kind: commit.Object}})
	if err := <-done; protocol.ReasonOf(err) != protocol.RootMismatch {
		t.Fatalf("Share = %v, want root-mismatch", err)
	}
	if f := e.recv(); f.Kind != frame.Fault || f.Reason != string(protocol.RootMismatch) {
		t.Fatalf("server got %+v", f)
	}
}

func TestResyncMovesReplica(t *testing.T) {
	s := newScript(t)
	_, e, d := s.join(t, peer.Options{})
	if _, err := d.Commit(set("mine", commit.IntValue(1))); err != nil {
		t.Fatal(err)
	}
	e.recv()
	if err := d.Resync(); err != nil {
		t.Fatal(err)
	}
	if f := e.recv(); f.Kind != frame.Open || f.Root == nil || !f.Want {
		t.Fatalf("server got %+v, want open with root and want", f)
	}
	e.send(frame.Frame{Kind: frame.State, Topic: 1, State: encode(t, set("theirs", commit.IntValue(2)))})
	ev := next(t, d)
	st, ok := ev.(peer.StateApplied)
	if !ok || len(st.Diff.Deltas) != 3 {
		t.Fatalf("event %#v, want StateApplied with 3 deltas", ev)
	}
	if js, _ := d.JSON(); string(js) != `{"theirs":2}` {
		t.Errorf("JSON = %s", js)
	}
}

func TestTopicEnds(t *testing.T) {
	cases := []struct {
		name   string
		f      frame.Frame
		reason protocol.Reason
		byPeer bool
		answer *frame.Frame
	}{
		{"leave", frame.Frame{Kind: frame.Leave, Topic: 1}, link.Left, true, nil},
		{"fault", frame.Frame{Kind: frame.Fault, Topic: 1, Reason: "forbidden", Message: "no"}, "forbidden", true, nil},
		{"unwanted state", frame.Frame{Kind: frame.State, Topic: 1}, protocol.UnwantedState, false,
			&frame.Frame{Kind: frame.Fault, Topic: 1, Reason: string(protocol.UnwantedState)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newScript(t)
			p, e, d := s.join(t, peer.Options{})
			e.send(c.f)
			ev := next(t, d)
			if end, ok := ev.(peer.Ended); !ok || end.Reason != c.reason || end.ByPeer != c.byPeer {
				t.Fatalf("event %#v, want Ended %s by peer %v", ev, c.reason, c.byPeer)
			}
			<-d.Done()
			if protocol.ReasonOf(d.Err()) != c.reason {
				t.Errorf("Err = %v", d.Err())
			}
			if c.answer != nil {
				if f := e.recv(); f.Kind != c.answer.Kind || f.Topic != c.answer.Topic || f.Reason != c.answer.Reason {
					t.Fatalf("server got %+v, want %+v", f, c.answer)
				}
			}
			// The link stays up.
			if p.Err() != nil {
				t.Fatalf("link ended: %v", p.Err())
			}
		})
	}
}

func TestLeave(t *testing.T) {
	s := newScript(t)
	_, e, d := s.join(t, peer.Options{})
	if err := d.Leave(); err != nil {
		t.Fatal(err)
	}
	if f := e.recv(); f.Kind != frame.Leave || f.Topic != d.Topic() {
		t.Fatalf("server got %+v", f)
	}
	if protocol.ReasonOf(d.Err()) != link.Left {
		t.Fatalf("Err = %v", d.Err())
	}
	if _, err := d.Commit(set("x", commit.NullValue())); protocol.ReasonOf(err) != link.Left {
		t.Fatalf("Commit after leave = %v", err)
	}
}

func TestBadFrameWithTopicFaultsThatTopic(t *testing.T) {
	s := newScript(t)
	p, e, d := s.join(t, peer.Options{})
	e.sendRaw([]byte{0x83, 0x04, 0x01, 0x00}) // a leave with three elements
	f := e.recv()
	if f.Kind != frame.Fault || f.Topic != 1 || f.Reason != string(protocol.BadFrame) || f.Message == "" {
		t.Fatalf("server got %+v, want fault bad-frame on its topic 1", f)
	}
	<-d.Done()
	if protocol.ReasonOf(d.Err()) != protocol.BadFrame {
		t.Errorf("Err = %v", d.Err())
	}
	if p.Err() != nil {
		t.Fatalf("link ended: %v", p.Err())
	}
}

func TestBadFrameWithoutTopicEndsLink(t *testing.T) {
	s := newScript(t)
	p, e, d := s.join(t, peer.Options{})
	e.sendRaw([]byte{0x80}) // an empty array
	f := e.recv()
	if f.Kind != frame.Fault || f.Topic != 0 || f.Reason != string(protocol.BadFrame) {
		t.Fatalf("server got %+v, want fault bad-frame on topic 0", f)
	}
	if code := e.closed(); code != websocket.StatusPolicyViolation {
		t.Errorf("close status %d, want 1008", code)
	}
	<-p.Done()
	if protocol.ReasonOf(p.Err()) != protocol.BadFrame || protocol.ReasonOf(d.Err()) != link.Closed {
		t.Errorf("peer %v, doc %v", p.Err(), d.Err())
	}
	if err := p.Close(); protocol.ReasonOf(err) != protocol.BadFrame {
		t.Errorf("Close = %v, want the reason the link ended", err)
	}
}

func TestBytesThatAreNotAValueEndLink(t *testing.T) {
	s := newScript(t)
	p, e, d := s.join(t, peer.Options{})
	e.sendRaw([]byte{0x82, 0x04}) // truncated
	if code := e.closed(); code != websocket.StatusInvalidFramePayloadData {
		t.Errorf("close status %d, want 1007 with no fault first", code)
	}
	<-p.Done()
	var ee *peer.EndedError
	if !errors.As(p.Err(), &ee) || ee.Reason != protocol.Truncated || !ee.ByPeer {
		t.Fatalf("Err = %#v, want truncated by the peer", p.Err())
	}
	if ev := next(t, d); ev.(peer.Ended).Reason != protocol.Truncated {
		t.Errorf("event %#v", ev)
	}
}

func TestFaultOnLinkEndsPeer(t *testing.T) {
	s := newScript(t)
	p, e, d := s.join(t, peer.Options{})
	e.send(frame.Frame{Kind: frame.Fault, Topic: 0, Reason: "shutdown", Message: "bye"})
	<-p.Done()
	var ee *peer.EndedError
	if !errors.As(p.Err(), &ee) || ee.Reason != "shutdown" || ee.Message != "bye" || !ee.ByPeer {
		t.Fatalf("Err = %#v", p.Err())
	}
	if ev := next(t, d); !reflect.DeepEqual(ev, peer.Ended{Reason: link.Closed, Message: "bye", ByPeer: true}) {
		t.Errorf("event %#v", ev)
	}
	if code := e.closed(); code != websocket.StatusNormalClosure {
		t.Errorf("close status %d", code)
	}
	if _, err := p.Join(testCtx(t), "x"); !errors.As(err, &ee) {
		t.Errorf("Join after the end = %v", err)
	}
}

func TestServerGoesAway(t *testing.T) {
	s := newScript(t)
	p, e, d := s.join(t, peer.Options{})
	e.c.Close(websocket.StatusGoingAway, "restart")
	<-p.Done()
	var ee *peer.EndedError
	if !errors.As(p.Err(), &ee) || ee.Reason != link.Closed || !ee.ByPeer || !strings.Contains(ee.Message, "restart") {
		t.Fatalf("Err = %#v", p.Err())
	}
	<-d.Done()
	if !errors.As(d.Err(), &ee) || ee.Name != "board" || ee.Reason != link.Closed {
		t.Fatalf("Doc.Err = %#v", d.Err())
	}
}

func TestTextMessagesAreNotFrames(t *testing.T) {
	s := newScript(t)
	_, e, d := s.join(t, peer.Options{})
	if err := e.c.Write(testCtx(t), websocket.MessageText, []byte(`{"id":1,"name":"x"}`)); err != nil {
		t.Fatal(err)
	}
	e.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{encode(t, set("a", commit.IntValue(1)))}})
	if ev := next(t, d); reflect.TypeOf(ev) != reflect.TypeOf(peer.Applied{}) {
		t.Fatalf("event %#v", ev)
	}
}

func TestFullEventChannelCountsMissed(t *testing.T) {
	s := newScript(t)
	_, e, d := s.join(t, peer.Options{EventBuffer: 1})
	e.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{
		encode(t, set("a", commit.IntValue(1))), encode(t, set("b", commit.IntValue(2))), encode(t, set("c", commit.IntValue(3))),
	}})
	// A want is the barrier: its state comes after the commits were taken.
	e.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "board", Root: board, Want: true})
	if f := e.recv(); f.Kind != frame.State {
		t.Fatalf("server got %+v", f)
	}
	if d.Missed() != 2 {
		t.Errorf("Missed = %d, want 2", d.Missed())
	}
	if ev := next(t, d); ev.(peer.Applied).Seq != 1 {
		t.Errorf("event %#v, want the first commit's", ev)
	}
	if js, _ := d.JSON(); string(js) != `{"a":1,"b":2,"c":3,"title":"plan"}` {
		t.Errorf("the replica fell behind its events: %s", js)
	}
}

func TestBacklogBoundEndsLink(t *testing.T) {
	s := newScript(t)
	p, e := s.dial(t, peer.Options{MaxBacklogBytes: 8})
	_, err := p.Join(testCtx(t), "a name longer than eight bytes")
	if protocol.ReasonOf(err) != peer.SlowConsumer {
		t.Fatalf("Join = %v, want slow-consumer", err)
	}
	if code := e.closed(); code != websocket.StatusPolicyViolation {
		t.Errorf("close status %d, want 1008", code)
	}
	if protocol.ReasonOf(p.Err()) != peer.SlowConsumer {
		t.Errorf("Err = %v", p.Err())
	}
}

func TestMessageLimit(t *testing.T) {
	s := newScript(t)
	p, e, _ := s.join(t, peer.Options{MaxMessageBytes: 64})
	e.send(frame.Frame{Kind: frame.Fault, Topic: 9, Reason: "x", Message: strings.Repeat("m", 100)})
	if code := e.closed(); code != websocket.StatusMessageTooBig {
		t.Errorf("close status %d, want 1009", code)
	}
	<-p.Done()
	if protocol.ReasonOf(p.Err()) != link.Closed {
		t.Errorf("Err = %v", p.Err())
	}
}

func TestCommitRefusedLocally(t *testing.T) {
	s := newScript(t)
	_, e, d := s.join(t, peer.Options{Link: link.Config{MaxFrameBytes: 64}})
	if _, err := d.Commit(replace("missing", commit.IntValue(1))); protocol.ReasonOf(err) != protocol.SlotMissing {
		t.Fatalf("Commit = %v, want slot-missing", err)
	}
	if _, err := d.Commit(); protocol.ReasonOf(err) != protocol.EmptyCommit {
		t.Fatalf("empty Commit = %v, want empty-commit", err)
	}
	// Too large for a frame: refused by the link and rolled back here.
	if _, err := d.Commit(set("big", commit.TextValue(strings.Repeat("x", 100)))); protocol.ReasonOf(err) != protocol.CommitTooLarge {
		t.Fatalf("large Commit = %v, want commit-too-large", err)
	}
	if js, _ := d.JSON(); string(js) != `{"title":"plan"}` {
		t.Errorf("JSON = %s, want the large commit rolled back", js)
	}
	// Nothing went out: the next frame the server sees is this one.
	if _, err := d.Commit(set("s", commit.IntValue(1))); err != nil {
		t.Fatal(err)
	}
	if f := e.recv(); f.Kind != frame.Commits || f.First != 1 {
		t.Fatalf("server got %+v", f)
	}
}

func TestHandshakeRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"reasons":[{"code":"unknown","message":"who are you"}]}`))
	}))
	defer srv.Close()
	_, err := peer.Dial(testCtx(t), "ws"+strings.TrimPrefix(srv.URL, "http"), peer.Options{})
	var he *peer.HandshakeError
	if !errors.As(err, &he) || he.StatusCode != http.StatusUnauthorized || !strings.Contains(string(he.Body), "who are you") {
		t.Fatalf("Dial = %#v", err)
	}
}

// Two peers through a relay: one shares, one joins, commits cross both ways
// and the replicas agree.
func TestTwoPeersConverge(t *testing.T) {
	r := newRelay(t)
	ctx := testCtx(t)
	a, err := peer.Dial(ctx, r.url(), peer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := peer.Dial(ctx, r.url(), peer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	shared := make(chan *peer.Doc, 1)
	go func() {
		d, err := a.Share(ctx, "board", planDoc(t))
		if err != nil {
			t.Error(err)
		}
		shared <- d
	}()
	db, err := b.Join(ctx, "board")
	if err != nil {
		t.Fatal(err)
	}
	da := <-shared
	if da == nil {
		t.FailNow()
	}

	if _, err := da.Commit(set("from-a", commit.IntValue(1))); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, db); ev.(peer.Applied).Seq != 1 {
		t.Fatalf("b got %#v", ev)
	}
	if _, err := db.Commit(set("from-b", commit.IntValue(2)), replace("title", commit.TextValue("both"))); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, da); ev.(peer.Applied).Seq != 1 {
		t.Fatalf("a got %#v", ev)
	}
	ja, _ := da.JSON()
	jb, _ := db.JSON()
	if string(ja) != string(jb) || string(ja) != `{"from-a":1,"from-b":2,"title":"both"}` {
		t.Fatalf("a %s, b %s", ja, jb)
	}
	if !reflect.DeepEqual(da.Snapshot(), db.Snapshot()) {
		t.Fatal("snapshots differ")
	}
	// A closing is a closed socket at the other end.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	<-b.Done()
	if protocol.ReasonOf(b.Err()) != link.Closed {
		t.Fatalf("b ended with %v", b.Err())
	}
}

func TestJoinRefusesStateOverLimits(t *testing.T) {
	s := newScript(t)
	p, e := s.dial(t, peer.Options{Limits: document.Limits{MaxSlots: 1}})
	errc := make(chan error, 1)
	go func() {
		_, err := p.Join(testCtx(t), "board")
		errc <- err
	}()
	e.joined("board", board, encode(t, set("a", commit.IntValue(1)), set("b", commit.IntValue(2))))
	err := <-errc
	if protocol.ReasonOf(err) != protocol.TooManySlots {
		t.Fatalf("Join = %v, want too-many-slots", err)
	}
	if f := e.recv(); f.Kind != frame.Leave || f.Topic != 1 {
		t.Fatalf("server got %+v, want leave", f)
	}
}

// Commits that arrive before the state a Join asked for are covered by it.
func TestJoinIgnoresCommitsBeforeState(t *testing.T) {
	s := newScript(t)
	p, e := s.dial(t, peer.Options{})
	res := make(chan *peer.Doc, 1)
	go func() {
		d, err := p.Join(testCtx(t), "board")
		if err != nil {
			t.Error(err)
		}
		res <- d
	}()
	e.recv()
	e.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "board", Root: board})
	e.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{encode(t, replace("title", commit.TextValue("x")))}})
	e.send(frame.Frame{Kind: frame.State, Topic: 1, State: encode(t, set("title", commit.TextValue("x")))})
	d := <-res
	if d == nil {
		t.FailNow()
	}
	e.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 2, Commits: [][]byte{encode(t, set("y", commit.IntValue(1)))}})
	if ev := next(t, d); ev.(peer.Applied).Seq != 2 {
		t.Fatalf("event %#v, want only the commit after the state", ev)
	}
	if js, _ := d.JSON(); string(js) != `{"title":"x","y":1}` {
		t.Errorf("JSON = %s", js)
	}
}

func TestJSONView(t *testing.T) {
	s := newScript(t)
	_, e, d := s.join(t, peer.Options{})
	list := commit.ID{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}
	m := commit.ID{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}
	ref := func(edge commit.Edge, k commit.Kind, id commit.ID) commit.Value {
		return commit.RefTo(commit.Reference{Edge: edge, Kind: k, ID: id})
	}
	c := encode(t,
		set("list", ref(commit.Attach, commit.Array, list)),
		set("map", ref(commit.Attach, commit.Map, m)),
		set("alias", ref(commit.Alias, commit.Array, list)),
		set("blob", commit.BytesValue([]byte{0xbe, 0xef})),
		set("f", commit.FloatValue(0.5)),
		commit.Delta{Op: commit.Add, ID: list, Ref: commit.ArrayKey([]byte{0x40}), Value: commit.TextValue("second")},
		commit.Delta{Op: commit.Add, ID: list, Ref: commit.ArrayKey([]byte{0x20}), Value: commit.TextValue("first")},
		commit.Delta{Op: commit.Add, ID: m, Ref: commit.MapKey(rootID), Value: commit.BoolValue(false)},
	)
	e.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{c}})
	if ev := next(t, d); reflect.TypeOf(ev) != reflect.TypeOf(peer.Applied{}) {
		t.Fatalf("event %#v", ev)
	}
	js, err := d.JSON()
	want := `{"alias":{"ref":"AwMDAwMDAwMDAwMD","kind":"array","edge":"alias"},"blob":{"bytes":"beef"},"f":0.5,` +
		`"list":["first","second"],"map":{"AQIDBAUGBwgJCgsM":false},"title":"plan"}`
	if err != nil || string(js) != want {
		t.Fatalf("JSON = %s, %v\nwant   %s", js, err, want)
	}
}

// A Share that meets a held offer with another root fails with
// root-mismatch and shares nothing; a later Join of the name builds on the
// root the other end opens with then.
func TestShareAgainstMismatchedOffer(t *testing.T) {
	s := newScript(t)
	p, e := s.dial(t, peer.Options{})
	e.send(frame.Frame{Kind: frame.Open, Topic: 5, Name: "board", Root: &frame.Root{ID: childID, Kind: commit.Map}})
	e.send(frame.Frame{Kind: frame.Leave, Topic: 99}) // barrier: answered with no-topic
	e.recv()
	if _, err := p.Share(testCtx(t), "board", planDoc(t)); protocol.ReasonOf(err) != protocol.RootMismatch {
		t.Fatalf("Share = %v, want root-mismatch", err)
	}
	if f := e.recv(); f.Kind != frame.Fault || f.Topic != 5 || f.Reason != string(protocol.RootMismatch) {
		t.Fatalf("server got %+v", f)
	}
	res := make(chan *peer.Doc, 1)
	go func() {
		d, err := p.Join(testCtx(t), "board")
		if err != nil {
			t.Error(err)
		}
		res <- d
	}()
	e.joined("board", board, nil)
	d := <-res
	if d == nil {
		t.FailNow()
	}
	if id, kind := d.Root(); id != rootID || kind != commit.Object {
		t.Errorf("root %v %v, want the one opened after the mismatch", id, kind)
	}
}

// A socket the other end stops reading ends the link after WriteTimeout,
// long before the backlog reaches its bound.
func TestWriteTimeoutEndsTheLink(t *testing.T) {
	s := newScript(t)
	// The server's end queues 64 messages and then stops reading, since
	// the test never takes them.
	p, _, d := s.join(t, peer.Options{WriteTimeout: 200 * time.Millisecond, MaxBacklogBytes: 256 << 20})
	big := commit.TextValue(strings.Repeat("x", 32<<10))
	for i := 0; ; i++ {
		delta := replace(fmt.Sprint("k", i%10), big)
		if i < 10 {
			delta = set(fmt.Sprint("k", i), big)
		}
		if _, err := d.Commit(delta); err != nil {
			break
		}
	}
	select {
	case <-p.Done():
	case <-time.After(wait):
		t.Fatal("the peer did not end")
	}
	if protocol.ReasonOf(p.Err()) == peer.SlowConsumer {
		t.Fatalf("ended by the backlog bound (%v), not the write timeout", p.Err())
	}
}

// Inside Doc.Read, the replica holds exactly the commits whose events were
// taken or are queued, while commits keep arriving: so a state printed from
// Read and the events after those queued is every commit once, which is
// what cmd/weftpeer -follow prints.
func TestReadCountsCoveredEvents(t *testing.T) {
	const n = 300
	s := newScript(t)
	_, e, d := s.join(t, peer.Options{EventBuffer: n})
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i := 1; i <= n; i++ {
			e.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: uint64(i),
				Commits: [][]byte{encode(t, set(fmt.Sprint("k", i), commit.IntValue(int64(i))))}})
		}
	}()
	for taken := 0; taken < n; taken++ {
		var slots, queued int
		d.Read(func(doc *document.Document) {
			slots = len(doc.Snapshot().Deltas) // the title and one a commit
			queued = len(d.Events())
		})
		if slots != 1+taken+queued {
			t.Fatalf("the replica holds %d commits, with %d events taken and %d queued", slots-1, taken, queued)
		}
		if _, ok := next(t, d).(peer.Applied); !ok {
			t.Fatal("an event other than Applied")
		}
	}
	<-sent
}
