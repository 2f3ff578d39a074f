package link

import (
	"fmt"
	"unicode/utf8"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Share shares a document under name and returns our topic number for it.
// root is the document's root, nil when we hold nothing (want must then be
// true); want asks for the peer's state. When a PeerOpened is waiting under
// name, the topic goes live at once; when the roots cannot pair, the peer's
// open is answered with fault root-mismatch or no-document, nothing is
// shared, and the error carries that reason.
func (l *Link) Share(name string, root *frame.Root, want bool) (uint64, error) {
	if l.ended {
		return 0, ErrEnded
	}
	if root == nil && !want {
		return 0, ErrNoRoot
	}
	if root != nil && root.Kind > commit.Map {
		return 0, ErrBadRoot
	}
	if !utf8.ValidString(name) {
		return 0, ErrBadText
	}
	if l.last >= frame.MaxNumber {
		return 0, ErrExhausted
	}
	t := l.byName[name]
	switch {
	case t != nil && t.ours != 0:
		return 0, fmt.Errorf("%w: %q is topic %d", ErrShared, name, t.ours)
	case t == nil && len(l.byName) >= l.cfg.MaxTopics:
		return 0, protocol.Errorf(protocol.TooManyTopics,
			fmt.Sprintf("the link already carries %d topics", l.cfg.MaxTopics))
	case t != nil:
		if r, msg := mismatch(name, root, t.peerRoot); r != "" {
			l.fault(t.peer, r, msg)
			l.drop(t)
			return 0, protocol.Errorf(r, msg)
		}
	}
	root = copyRoot(root) // the caller's may change; ours must not
	if t == nil {
		t = &topic{name: name}
		l.byName[name] = t
	}
	l.last++
	t.ours, t.root, t.window.size = l.last, root, l.cfg.Window
	if want {
		t.want = wantShare
	}
	l.ours[t.ours] = t
	l.send(frame.Frame{Kind: frame.Open, Topic: t.ours, Name: name, Root: copyRoot(root), Want: want})
	if t.peer != 0 {
		l.goLive(t, t.peerWant)
	}
	return t.ours, nil
}

// Decline answers a waiting PeerOpened with fault no-document: we do not
// hold the name and will not share it.
func (l *Link) Decline(name string) error {
	return l.DeclineWith(name, protocol.NoDocument, fmt.Sprintf("%q is not held here", name))
}

// mismatch says why two roots for one name cannot be one document.
func mismatch(name string, ours, theirs *frame.Root) (protocol.Reason, string) {
	switch {
	case ours == nil && theirs == nil:
		return protocol.NoDocument, fmt.Sprintf("neither end holds %q", name)
	case ours != nil && theirs != nil && *ours != *theirs:
		return protocol.RootMismatch, fmt.Sprintf("%q has root %s here and %s there",
			name, rootText(ours), rootText(theirs))
	}
	return "", ""
}

func rootText(r *frame.Root) string {
	if r == nil {
		return "none"
	}
	return r.ID.String() + " " + r.Kind.String()
}

// goLive pairs t: both ends have now shared it. Commits held before live go
// out, unless the peer wants our state, which covers them.
func (l *Link) goLive(t *topic, peerWants bool) {
	if t.root == nil {
		t.root = t.peerRoot
	}
	t.live = true
	l.emit(Live{Topic: t.ours, Name: t.name})
	q := t.queue
	t.queue = nil
	if peerWants {
		l.peerWants(t)
		return
	}
	for _, p := range q {
		l.sendCommit(t, p.seq, p.commit, p.undo)
	}
}

// peerWants takes the peer's request for our state on a live topic.
func (l *Link) peerWants(t *topic) {
	switch {
	case t.answer != answerNone:
		// A state is already due; it is computed when sent, so it answers
		// this want too.
	case t.want == wantShare && t.peerHolds:
		t.answer = answerHeld
	default:
		t.answer = answerAsked
		l.emit(StateWanted{Topic: t.ours})
	}
}
