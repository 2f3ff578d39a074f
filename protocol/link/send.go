package link

import (
	"fmt"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Send sends one commit on our topic and returns its sequence number. undo
// is kept with it in the window for a refusal report. Before the topic is
// live, and while the peer waits for our state, the commit is held: the
// state covers it (the application's state includes every commit it sent
// before SendState), so it is dropped unsent there, its number used. A
// commit must never reach a peer before the state it asked for
// (replication.md section 2; the aweft client refuses such commits). The
// link keeps c and undo without copying them.
func (l *Link) Send(topic uint64, c, undo []byte) (uint64, error) {
	t, err := l.topic(topic)
	if err != nil {
		return 0, err
	}
	if len(c) == 0 {
		return 0, ErrEmptyCommit
	}
	if t.seq >= frame.MaxNumber {
		return 0, ErrExhausted
	}
	seq := t.seq + 1
	if n := commitsFrameBytes(topic, seq, 1, itemBytes(len(c))); n > l.cfg.MaxFrameBytes {
		return 0, protocol.Errorf(protocol.CommitTooLarge,
			fmt.Sprintf("a %d-byte commit makes a %d-byte frame, over %d", len(c), n, l.cfg.MaxFrameBytes))
	}
	if !t.live || t.answer != answerNone {
		if len(t.queue) >= l.cfg.MaxQueued {
			what := "to go live"
			if t.live {
				what = "for its state to be sent"
			}
			return 0, protocol.Errorf(protocol.TooManyPendingCommit,
				fmt.Sprintf("%d commits already wait for topic %d %s", l.cfg.MaxQueued, topic, what))
		}
		t.queue = append(t.queue, pending{seq, c, undo})
	} else {
		l.sendCommit(t, seq, c, undo)
	}
	t.seq = seq
	return seq, nil
}

// sendCommit queues one commit on a live topic, joining the last frame when
// it carries the commits just before this one and has room.
func (l *Link) sendCommit(t *topic, seq uint64, c, undo []byte) {
	if !l.cfg.ForgetSent {
		t.window.put(seq, c, undo)
	}
	item := itemBytes(len(c))
	if n := len(l.out); n > 0 {
		f := &l.out[n-1]
		if f.Kind == frame.Commits && f.Topic == t.ours && f.First+uint64(len(f.Commits)) == seq &&
			commitsFrameBytes(f.Topic, f.First, len(f.Commits)+1, l.body+item) <= l.cfg.MaxFrameBytes {
			f.Commits = append(f.Commits, c)
			l.body += item
			return
		}
	}
	var cs [][]byte
	if n := len(l.spareCommits); n > 0 {
		cs, l.spareCommits = l.spareCommits[n-1], l.spareCommits[:n-1]
	}
	l.send(frame.Frame{Kind: frame.Commits, Topic: t.ours, First: seq, Commits: append(cs, c)})
	l.body = item
}

// SendState answers StateWanted with the document's state: one commit of
// adds, or nil (or empty) for an empty document.
func (l *Link) SendState(topic uint64, state []byte) error {
	t, err := l.topic(topic)
	switch {
	case err != nil:
		return err
	case !t.live:
		return ErrNotLive
	case t.answer != answerAsked:
		return ErrNotWanted
	}
	if len(state) == 0 {
		state = nil
	}
	if n := stateFrameBytes(topic, state); n > l.cfg.MaxFrameBytes {
		return protocol.Errorf(protocol.CommitTooLarge,
			fmt.Sprintf("a %d-byte state makes a %d-byte frame, over %d", len(state), n, l.cfg.MaxFrameBytes))
	}
	t.answer = answerNone
	t.queue = nil // the state covers the commits held for it
	l.send(frame.Frame{Kind: frame.State, Topic: topic, State: state})
	return nil
}

// Refuse answers a CommitsArrived we do not accept: refused with our topic
// number, the peer's seq and the reasons.
func (l *Link) Refuse(topic, seq uint64, reasons []frame.Reason) error {
	t, err := l.topic(topic)
	switch {
	case err != nil:
		return err
	case !t.live:
		return ErrNotLive
	case seq == 0 || seq > frame.MaxNumber:
		return ErrBadSeq
	case len(reasons) == 0:
		return ErrNoReasons
	case !validReasons(reasons):
		return ErrBadText
	}
	l.send(frame.Frame{Kind: frame.Refused, Topic: topic, Seq: seq, Reasons: reasons})
	return nil
}

// Resync asks for the peer's state: open again with want. It does nothing
// while a want of ours is already outstanding.
func (l *Link) Resync(topic uint64) error {
	t, err := l.topic(topic)
	if err != nil || t.want != wantNone {
		return err
	}
	// With no want outstanding we hold a root: ours, or the peer's once live.
	t.want = wantResync
	l.send(frame.Frame{Kind: frame.Open, Topic: topic, Name: t.name, Root: copyRoot(t.root), Want: true})
	return nil
}

// Leave ends our topic at both ends.
func (l *Link) Leave(topic uint64) error {
	t, err := l.topic(topic)
	if err != nil {
		return err
	}
	l.send(frame.Frame{Kind: frame.Leave, Topic: topic})
	l.end(t, Left, "", false)
	return nil
}

func (l *Link) topic(n uint64) (*topic, error) {
	if l.ended {
		return nil, ErrEnded
	}
	t := l.ours[n]
	if t == nil {
		return nil, protocol.Errorf(protocol.NoTopic, fmt.Sprintf("topic %d is not open", n))
	}
	return t, nil
}

// headBytes is the size of a format.md section 6 head carrying n.
func headBytes(n uint64) int {
	switch {
	case n < 24:
		return 1
	case n < 1<<8:
		return 2
	case n < 1<<16:
		return 3
	case n < 1<<32:
		return 5
	}
	return 9
}

// itemBytes is the encoded size of one commit inside a commits frame.
func itemBytes(n int) int { return headBytes(uint64(n)) + n }

// commitsFrameBytes is the encoded size of [2, topic, first, [count items
// of body bytes in all]].
func commitsFrameBytes(topic, first uint64, count, body int) int {
	return 2 + headBytes(topic) + headBytes(first) + headBytes(uint64(count)) + body
}

// stateFrameBytes is the encoded size of [1, topic, state or null].
func stateFrameBytes(topic uint64, state []byte) int {
	n := 2 + headBytes(topic)
	if state == nil {
		return n + 1
	}
	return n + itemBytes(len(state))
}
