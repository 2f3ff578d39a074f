package link

import (
	"fmt"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/frame"
)

// DeclineWith answers a pending peer open with a fault of the application's
// own reason (an authority that does not let this peer open the name, a
// store that could not load it), naming the peer's number. Decline is the
// same with no-document.
func (l *Link) DeclineWith(name string, r protocol.Reason, message string) error {
	if l.ended {
		return ErrEnded
	}
	t := l.byName[name]
	if t == nil || t.ours != 0 {
		return fmt.Errorf("%w: %q", ErrNotPending, name)
	}
	l.fault(t.peer, r, message)
	l.drop(t)
	return nil
}

// Fault ends one of our topics for a reason of the application's, telling
// the peer with a fault on its number for the topic. Before the peer's open
// has arrived we know no number of its, so the peer hears leave instead.
func (l *Link) Fault(topic uint64, r protocol.Reason, message string) error {
	t, err := l.topic(topic)
	if err != nil {
		return err
	}
	if t.peer != 0 {
		l.fault(t.peer, r, message)
	} else {
		l.send(frame.Frame{Kind: frame.Leave, Topic: topic})
	}
	l.end(t, r, message, false)
	return nil
}
