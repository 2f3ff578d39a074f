package link

import (
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Receive steps the link with one decoded frame from the peer. A frame that
// is malformed (replication.md section 5) is answered as BadFrame would.
func (l *Link) Receive(f frame.Frame) {
	if l.ended {
		return
	}
	if msg := malformed(f); msg != "" {
		topic := f.Topic
		if f.Kind >= frame.Fault || topic > frame.MaxNumber {
			// An unknown kind has no element we can call a topic, and a
			// fault's names our number, not the peer's (frame.BadFrameError
			// says the same).
			topic = 0
		}
		l.BadFrame(topic, msg)
		return
	}
	switch f.Kind {
	case frame.Open:
		l.recvOpen(f)
	case frame.State:
		l.recvState(f)
	case frame.Commits:
		l.recvCommits(f)
	case frame.Refused:
		l.recvRefused(f)
	case frame.Leave:
		l.recvLeave(f)
	case frame.Fault:
		l.recvFault(f)
	}
}

// malformed says what is wrong with f, or "" when nothing is. It refuses
// what frame.Decode refuses, so a frame built in memory meets the same rules
// as one read from bytes.
func malformed(f frame.Frame) string {
	switch {
	case f.Kind > frame.Fault:
		return fmt.Sprintf("unknown frame kind %d", f.Kind)
	case f.Kind != frame.Fault && f.Topic == 0:
		return "topic 0 names the link, and only a fault may name it"
	case f.Topic > frame.MaxNumber:
		return "a topic number is above 2^53"
	}
	switch f.Kind {
	case frame.Open:
		if !utf8.ValidString(f.Name) {
			return "a name is not UTF-8"
		}
		if f.Root == nil && !f.Want {
			return "an end that holds nothing must want the other end's state"
		}
		if f.Root != nil && f.Root.Kind > commit.Map {
			return fmt.Sprintf("root kind %d is not object, array or map", f.Root.Kind)
		}
	case frame.State:
		if f.State != nil && len(f.State) == 0 {
			return "a state's commit is empty, and a commit is never empty"
		}
	case frame.Commits:
		if len(f.Commits) == 0 {
			return "a commits frame carries at least one commit"
		}
		if f.First == 0 || f.First > frame.MaxNumber-uint64(len(f.Commits)-1) {
			return "commit sequence numbers run from 1 to 2^53"
		}
		for i, c := range f.Commits {
			if len(c) == 0 {
				return fmt.Sprintf("commit %d is empty, and a commit is never empty", i)
			}
		}
	case frame.Refused:
		if len(f.Reasons) == 0 {
			return "a refused frame carries at least one reason"
		}
		if f.Seq == 0 || f.Seq > frame.MaxNumber {
			return "sequence numbers run from 1 to 2^53"
		}
		if !validReasons(f.Reasons) {
			return "a reason is not UTF-8"
		}
	case frame.Fault:
		if !utf8.ValidString(f.Reason) || !utf8.ValidString(f.Message) {
			return "a fault's reason or message is not UTF-8"
		}
	}
	return ""
}

func validReasons(rs []frame.Reason) bool {
	for _, r := range rs {
		if !utf8.ValidString(r.Code) || !utf8.ValidString(r.Message) {
			return false
		}
		for _, s := range r.Path {
			if !utf8.ValidString(s) {
				return false
			}
		}
	}
	return true
}

// BadFrame answers a frame that decoded as a value but is malformed. topic
// is its topic element when that was a number >= 1, else 0: with a topic,
// fault bad-frame names it (as the peer's number) and our side of it ends;
// with 0, fault bad-frame on topic 0 ends the link.
func (l *Link) BadFrame(topic uint64, message string) {
	if l.ended {
		return
	}
	if topic > frame.MaxNumber {
		topic = 0
	}
	l.fault(topic, protocol.BadFrame, message)
	if topic == 0 {
		l.close(protocol.BadFrame, message, false)
		return
	}
	if t := l.peers[topic]; t != nil {
		l.end(t, protocol.BadFrame, message, false)
	}
}

func (l *Link) recvOpen(f frame.Frame) {
	if t := l.peers[f.Topic]; t != nil {
		l.reopen(t, f)
		return
	}
	t := l.byName[f.Name]
	switch {
	case t != nil && t.peer != 0:
		l.fault(f.Topic, protocol.BadFrame,
			fmt.Sprintf("%q is already open as your topic %d", f.Name, t.peer))
	case t != nil: // we shared first
		t.peer, t.peerRoot, t.peerHolds = f.Topic, copyRoot(f.Root), !f.Want
		l.peers[f.Topic] = t
		if r, msg := mismatch(t.name, t.root, t.peerRoot); r != "" {
			l.fault(f.Topic, r, msg)
			l.end(t, r, msg, false)
			return
		}
		l.goLive(t, f.Want)
	case len(l.byName) >= l.cfg.MaxTopics:
		l.fault(f.Topic, protocol.TooManyTopics,
			fmt.Sprintf("the link already carries %d topics", l.cfg.MaxTopics))
	default:
		t = &topic{name: f.Name, peer: f.Topic, peerRoot: copyRoot(f.Root), peerHolds: !f.Want, peerWant: f.Want}
		l.byName[f.Name] = t
		l.peers[f.Topic] = t
		l.emit(PeerOpened{Name: f.Name, PeerTopic: f.Topic, Root: copyRoot(f.Root), Want: f.Want})
	}
}

// reopen takes a second open on a topic the peer already opened.
func (l *Link) reopen(t *topic, f frame.Frame) {
	if f.Name != t.name {
		msg := fmt.Sprintf("your topic %d is %q, not %q", f.Topic, t.name, f.Name)
		l.fault(f.Topic, protocol.BadFrame, msg)
		l.end(t, protocol.BadFrame, msg, false)
		return
	}
	// Before live the roots are compared with the peer's first open, after
	// it with the document's; a re-open with no root is a mismatch on a
	// live topic because the peer cannot hold nothing and still be in step.
	want := t.peerRoot
	if t.live {
		want = t.root
	}
	if !sameRoot(want, f.Root) || (t.live && f.Root == nil) {
		msg := fmt.Sprintf("%q was opened with root %s and again with %s",
			t.name, rootText(want), rootText(f.Root))
		l.fault(f.Topic, protocol.RootMismatch, msg)
		l.end(t, protocol.RootMismatch, msg, false)
		return
	}
	switch {
	case !t.live:
		t.peerWant = t.peerWant || f.Want
	case f.Want:
		l.peerWants(t)
	}
}

func (l *Link) recvState(f frame.Frame) {
	t := l.live(f.Topic)
	if t == nil {
		return
	}
	if t.want == wantNone {
		msg := fmt.Sprintf("nothing asked for the state of %q", t.name)
		l.fault(f.Topic, protocol.UnwantedState, msg)
		l.end(t, protocol.UnwantedState, msg, false)
		return
	}
	t.want = wantNone
	l.emit(StateArrived{Topic: t.ours, State: f.State})
	if t.answer == answerHeld {
		t.answer = answerAsked
		l.emit(StateWanted{Topic: t.ours})
	}
}

func (l *Link) recvCommits(f frame.Frame) {
	t := l.live(f.Topic)
	if t == nil {
		return
	}
	l.events = slices.Grow(l.events, len(f.Commits))
	for i, c := range f.Commits {
		l.emit(CommitsArrived{Topic: t.ours, Seq: f.First + uint64(i), Commit: c})
	}
}

func (l *Link) recvRefused(f frame.Frame) {
	t := l.live(f.Topic)
	if t == nil {
		return
	}
	c, u := t.window.get(f.Seq)
	l.emit(PeerRefused{Topic: t.ours, Seq: f.Seq, Reasons: f.Reasons, Commit: c, Undo: u})
}

func (l *Link) recvLeave(f frame.Frame) {
	t := l.peers[f.Topic]
	if t == nil {
		l.noTopic(f.Topic, nil)
		return
	}
	l.end(t, Left, "", true)
}

func (l *Link) recvFault(f frame.Frame) {
	if f.Topic == 0 {
		l.close(protocol.Reason(f.Reason), f.Message, true)
		return
	}
	// Faults name our number. One about a topic we no longer hold crossed
	// our own leave or fault, and is never answered.
	if t := l.ours[f.Topic]; t != nil {
		l.end(t, protocol.Reason(f.Reason), f.Message, true)
	}
}

// live returns the live topic the peer numbered p, or answers no-topic.
func (l *Link) live(p uint64) *topic {
	t := l.peers[p]
	if t == nil || !t.live {
		l.noTopic(p, t)
		return nil
	}
	return t
}

// noTopic answers a frame about topic p, which is not open here. A held
// PeerOpened under p ends too: the fault ends the peer's side of it.
func (l *Link) noTopic(p uint64, t *topic) {
	msg := fmt.Sprintf("nothing here is open as topic %d", p)
	l.fault(p, protocol.NoTopic, msg)
	if t != nil {
		l.end(t, protocol.NoTopic, msg, false)
	}
}

func sameRoot(a, b *frame.Root) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func copyRoot(r *frame.Root) *frame.Root {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}
