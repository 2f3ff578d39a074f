package bridge

import "testing"

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
