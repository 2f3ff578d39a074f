package link

import (
	"sort"

	"github.com/weftgate/weftgate/protocol"
)

// FaultLink ends the link with fault reason on topic 0, for a bound the
// peer broke or a gateway that is going away.
func (l *Link) FaultLink(reason protocol.Reason, message string) {
	if l.ended {
		return
	}
	l.fault(0, reason, message)
	l.close(reason, message, false)
}

// Close ends the link without a word, for a transport that ended or bytes
// that were not a value: every topic hears Closed, then LinkEnded.
func (l *Link) Close() {
	if !l.ended {
		l.close(Closed, "", false)
	}
}

// close ends every topic, ours in number order and then held PeerOpened in
// the peer's, and then the link.
func (l *Link) close(r protocol.Reason, msg string, byPeer bool) {
	ts := make([]*topic, 0, len(l.byName))
	for _, t := range l.byName {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool {
		a, b := ts[i], ts[j]
		if (a.ours == 0) != (b.ours == 0) {
			return a.ours != 0
		}
		if a.ours != b.ours {
			return a.ours < b.ours
		}
		return a.peer < b.peer
	})
	for _, t := range ts {
		l.end(t, Closed, msg, byPeer)
	}
	l.ended = true
	l.emit(LinkEnded{Reason: r, Message: msg, ByPeer: byPeer})
}
