package peer_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/internal/spectest"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// fuzzSep splits one fuzz input into several binary messages.
var fuzzSep = []byte{0xff, 0xfe, 0xfd}

// maxFuzzMessages bounds the messages one input is split into.
const maxFuzzMessages = 32

// FuzzPeerFrames is a hostile server: after a Join of "board" (its topic
// 1), it sends arbitrary bytes as binary messages. The peer must not panic,
// must keep a replica that is a well-formed document whatever it applied,
// and must close promptly with every goroutine gone (goleak checks at the
// end).
func FuzzPeerFrames(f *testing.F) {
	seedPeerFuzz(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s := newScript(t)
		p, e, d := s.join(t, peer.Options{})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		for _, m := range bytes.SplitN(data, fuzzSep, maxFuzzMessages) {
			if e.c.Write(ctx, websocket.MessageBinary, m) != nil {
				break // the peer ended the link
			}
		}
		cancel()
		// Whatever it applied, the replica is a document: its snapshot
		// encodes and rebuilds an equal one.
		snap := d.Snapshot()
		if len(snap.Deltas) > 0 {
			b, err := commit.Encode(snap)
			if err != nil {
				t.Fatalf("the replica's snapshot does not encode: %v", err)
			}
			id, kind := d.Root()
			again := document.New(id, kind, document.Limits{})
			if _, err := again.Reconcile(snap); err != nil {
				t.Fatalf("the replica's snapshot does not rebuild: %v", err)
			}
			b2, _ := commit.Encode(again.Snapshot())
			if !bytes.Equal(b, b2) {
				t.Fatal("the rebuilt replica differs")
			}
		}
		closed := make(chan struct{})
		go func() {
			p.Close()
			close(closed)
		}()
		select {
		case <-closed:
		case <-time.After(wait):
			t.Fatal("Close hung after hostile frames")
		}
		select {
		case <-d.Done():
		default:
			t.Fatal("the Doc did not end with its peer")
		}
	})
}

// seedPeerFuzz adds every frame fixture, every commit fixture and commit
// rejection fixture inside a commits frame and a state on topic 1, and a
// few link moves.
func seedPeerFuzz(f *testing.F) {
	read := func(path string, v any) {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			f.Fatalf("%s: %v", path, err)
		}
	}
	unhex := func(s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	enc := func(fr frame.Frame) []byte {
		b, err := frame.Encode(fr)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	for _, path := range spectest.Files(f, "frames") {
		var fx struct{ Bytes string }
		read(path, &fx)
		f.Add(unhex(fx.Bytes))
	}
	seq := uint64(0)
	add := func(c []byte) {
		seq++
		f.Add(enc(frame.Frame{Kind: frame.Commits, Topic: 1, First: seq, Commits: [][]byte{c}}))
	}
	for _, path := range spectest.Files(f, "fixtures/invalid") {
		var fx struct{ Bytes string }
		read(path, &fx)
		add(unhex(fx.Bytes))
	}
	for _, path := range spectest.Files(f, "fixtures") {
		var fx struct{ Commits []struct{ Bytes string } }
		read(path, &fx)
		for _, c := range fx.Commits {
			add(unhex(c.Bytes))
		}
	}
	title := func(op commit.Op, v commit.Value) []byte {
		b, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: op, ID: rootID, Ref: commit.ObjectKey("title"), Value: v}}})
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	f.Add(bytes.Join([][]byte{
		enc(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{title(commit.Replace, commit.TextValue("a")), title(commit.Remove, commit.Value{})}}),
		enc(frame.Frame{Kind: frame.Open, Topic: 1, Name: "board", Root: board, Want: true}),
		enc(frame.Frame{Kind: frame.State, Topic: 1, State: title(commit.Add, commit.IntValue(1))}),
		enc(frame.Frame{Kind: frame.Refused, Topic: 1, Seq: 1, Reasons: []frame.Reason{{Code: "no", Message: "no"}}}),
		enc(frame.Frame{Kind: frame.Open, Topic: 2, Name: "other", Root: &frame.Root{Kind: commit.Map}}),
		enc(frame.Frame{Kind: frame.Leave, Topic: 1}),
		enc(frame.Frame{Kind: frame.Fault, Topic: 0, Reason: "bye", Message: "now"}),
	}, fuzzSep))
}
