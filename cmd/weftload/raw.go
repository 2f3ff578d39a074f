package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/internal/wsread"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Watcher and writer kinds (-watch, -write).
const (
	watchPeer = "peer" // a full aweft end: decode, check and apply to a replica
	watchRaw  = "raw"  // a bare socket: decode frames and commits, keep nothing
)

// rawWriteTimeout bounds one write of a raw writer: a gateway that stops
// reading ends that socket instead of hanging the run.
const rawWriteTimeout = 30 * time.Second

// rawTopic is the one topic a raw watcher opens.
const rawTopic = 1

// dialRaw opens a bare WebSocket on name, asking for its state, and
// returns once the state has arrived, with the state (nil: an empty
// document). It speaks only enough of the link to watch: commits arrive,
// nothing is answered.
func dialRaw(ctx context.Context, url, name string) (*websocket.Conn, commit.Commit, error) {
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, commit.Commit{}, &peer.HandshakeError{Err: err}
	}
	ws.SetReadLimit(peer.DefaultMaxMessageBytes)
	m, err := frame.Encode(frame.Frame{Kind: frame.Open, Topic: rawTopic, Name: name, Want: true})
	if err == nil {
		err = ws.Write(ctx, websocket.MessageBinary, m)
	}
	for err == nil {
		var f frame.Frame
		if f, err = readFrame(ctx, ws); err != nil {
			break
		}
		switch f.Kind {
		case frame.State:
			var state commit.Commit
			if f.State != nil {
				state, err = commit.Decode(f.State)
			}
			if err == nil {
				return ws, state, nil
			}
		case frame.Fault:
			err = protocol.Errorf(protocol.Reason(f.Reason), f.Message) // its reason names it (no-document is retried)
		}
	}
	ws.CloseNow()
	return nil, commit.Commit{}, err
}

func readFrame(ctx context.Context, ws *websocket.Conn) (frame.Frame, error) {
	_, m, err := wsread.Read(ctx, ws)
	if err != nil {
		return frame.Frame{}, err
	}
	return frame.Decode(m)
}

// commit sends ds as m's next commit: through its peer, or for a raw
// writer encoded as a one-commit frame on its topic, numbered from 1.
func (m *member) commit(ds []commit.Delta) error {
	if m.d != nil {
		_, err := m.d.Commit(ds...)
		return err
	}
	b, err := commit.Encode(commit.Commit{Deltas: ds})
	if err != nil {
		return err
	}
	m.seq++
	if m.out, err = frame.Append(m.out[:0], frame.Frame{Kind: frame.Commits, Topic: rawTopic, First: m.seq, Commits: [][]byte{b}}); err != nil {
		return err
	}
	// One timer a socket bounds each write, as in the gateway: a context
	// that can end would cost coder/websocket a context.AfterFunc a write.
	if m.guard == nil {
		m.guard = time.AfterFunc(rawWriteTimeout, func() { m.ws.CloseNow() })
	} else {
		m.guard.Reset(rawWriteTimeout)
	}
	err = m.ws.Write(context.Background(), websocket.MessageBinary, m.out)
	if !m.guard.Stop() && err == nil {
		err = fmt.Errorf("a write took over %v", rawWriteTimeout)
	}
	return err
}

// watchRaw is observe for a raw watcher or writer: it reads until the
// socket closes, each message in a lent buffer (wsread.Visit), so at
// thousands of watchers the tool keeps its share of the host small.
func (s *stats) watchRaw(m *member, ms []*member) {
	bad := false
	visit := func(_ websocket.MessageType, b []byte) {
		f, err := frame.Decode(b)
		if err != nil {
			s.fail("raw watcher", err)
			bad = true
			return
		}
		s.rawFrame(f, m, ms)
	}
	for !bad {
		if err := wsread.Visit(context.Background(), m.ws, visit); err != nil {
			if websocket.CloseStatus(err) != websocket.StatusNormalClosure && !errors.Is(err, context.Canceled) && !m.closing.Load() {
				s.fail("raw watcher", err)
			}
			return
		}
	}
}

// rawFrame counts what one frame brought a raw member. Its commits came in
// one read, so one clock reading serves them all.
func (s *stats) rawFrame(f frame.Frame, m *member, ms []*member) {
	switch f.Kind {
	case frame.Commits:
		s.frames.Add(1)
		s.framed.Add(int64(len(f.Commits)))
		now, n := time.Now().UnixNano(), int64(0)
		for _, b := range f.Commits {
			c, err := commit.Decode(b)
			if err != nil {
				s.fail("raw watcher", err)
				continue
			}
			if s.deliver(now, c, m, ms) {
				n++
			}
		}
		s.delivered.Add(n)
	case frame.Refused:
		// Only a raw writer sends, so only it hears refused.
		s.refused.Add(1)
		if m.credits != nil {
			select {
			case <-m.credits:
			default:
			}
		}
	case frame.Fault, frame.Leave:
		s.failN("ended: "+string(f.Reason), 1)
	}
}
