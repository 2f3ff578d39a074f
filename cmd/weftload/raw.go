package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/internal/wsread"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Watcher kinds (-watch).
const (
	watchPeer = "peer" // a full aweft end: decode, check and apply to a replica
	watchRaw  = "raw"  // a bare socket: decode frames and commits, keep nothing
)

// rawTopic is the one topic a raw watcher opens.
const rawTopic = 1

// dialRaw opens a bare WebSocket on name, asking for its state, and
// returns once the state has arrived. It speaks only enough of the link to
// watch: commits arrive, nothing is answered.
func dialRaw(ctx context.Context, url, name string) (*websocket.Conn, error) {
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, &peer.HandshakeError{Err: err}
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
			return ws, nil
		case frame.Fault:
			err = fmt.Errorf("fault %s: %s", f.Reason, f.Message)
		}
	}
	ws.CloseNow()
	return nil, err
}

func readFrame(ctx context.Context, ws *websocket.Conn) (frame.Frame, error) {
	_, m, err := wsread.Read(ctx, ws)
	if err != nil {
		return frame.Frame{}, err
	}
	return frame.Decode(m)
}

// watchRaw is observe for a raw watcher: it reads until the socket closes.
func (s *stats) watchRaw(m *member, ms []*member) {
	for {
		f, err := readFrame(context.Background(), m.ws)
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusNormalClosure && !errors.Is(err, context.Canceled) && !m.closing.Load() {
				s.fail("raw watcher", err)
			}
			return
		}
		switch f.Kind {
		case frame.Commits:
			for _, b := range f.Commits {
				c, err := commit.Decode(b)
				if err != nil {
					s.fail("raw watcher", err)
					continue
				}
				s.delivery(c, m, ms)
			}
		case frame.Fault, frame.Leave:
			s.failN("ended: "+string(f.Reason), 1)
		}
	}
}
