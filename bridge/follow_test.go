package bridge

import (
	"context"
	"testing"

	"google.golang.org/grpc"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// A notice that comes while a follower is finding its document absent is
// not lost: the follower hands the name back and the handler is woken, so
// the document is followed once it appears. (A lost notice left an exact
// subscription deaf to a document created at the moment it began.)
func TestNoticeWhileFollowingIsKept(t *testing.T) {
	sub := &subscription{wake: make(chan struct{}, 1), followed: map[string]bool{}, pending: map[string]struct{}{}}
	sub.followed["doc"] = false // a follower runs
	sub.notice("doc")           // the document appears meanwhile
	<-sub.wake                  // the notice itself woke the handler
	sub.unfollow("doc")         // the follower had found it absent
	if _, ok := sub.pending["doc"]; !ok {
		t.Fatal("the notice that came while following was lost")
	}
	select {
	case <-sub.wake:
	default:
		t.Fatal("the handler was not woken to follow the document again")
	}
	if _, ok := sub.followed["doc"]; ok {
		t.Fatal("the absent document is still marked followed")
	}

	// Without a notice meanwhile, an absent document is simply dropped.
	sub.followed["other"] = false
	sub.unfollow("other")
	if _, ok := sub.pending["other"]; ok {
		t.Fatal("an absent document with no notice was queued again")
	}
}

// sentStream records what serve sends, and ends the subscription once it
// has sent n events.
type sentStream struct {
	grpc.ServerStreamingServer[v1.SubscribeResponse]
	sent   []*v1.SubscribeResponse
	n      int
	cancel context.CancelFunc
}

func (s *sentStream) Send(ev *v1.SubscribeResponse) error {
	s.sent = append(s.sent, ev)
	if len(s.sent) == s.n {
		s.cancel()
	}
	return nil
}

// A follower that catches up before the handler starts serving has its
// catch-up sent before CaughtUp, not overtaken by it. (The handler's own
// count came last and sent CaughtUp ahead of the queued snapshot.)
func TestCatchUpBeforeServeGoesFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := &subscription{ctx: ctx, cancel: cancel, out: make(chan *v1.SubscribeResponse, subscribeQueue), wake: make(chan struct{}, 1)}
	sub.backlog.Store(2) // one follower and the handler's guard
	snap := &v1.SubscribeResponse{Event: &v1.SubscribeResponse_Snapshot{Snapshot: &v1.SnapshotEvent{Document: "doc", Cursor: 41}}}
	live := &v1.SubscribeResponse{Event: &v1.SubscribeResponse_Commit{Commit: &v1.CommitEvent{Document: "doc", Cursor: 42}}}
	sub.emit(snap)
	sub.caughtUp(false) // the follower is through its backlog
	sub.emit(live)      // and goes on live before the handler runs
	st := &sentStream{n: 3, cancel: cancel}
	sub.serve(st)
	if len(st.sent) != 3 || st.sent[0] != snap || st.sent[1].GetCaughtUp() == nil || st.sent[2] != live {
		t.Fatalf("sent %v, want the snapshot, CaughtUp, the live commit", st.sent)
	}
}
