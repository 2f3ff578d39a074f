package bridge_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/weftgate/weftgate/bridge"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
)

// claimView claims pat for accept questions in view, and returns the result.
func (b *backend) claimView(id uint64, pat *v1.Pattern, timeout time.Duration, view v1.CommitView) *v1.ClaimResult {
	b.t.Helper()
	c := &v1.Claim{ClaimId: id, Pattern: pat, Kinds: []v1.QuestionKind{kAccept}, CommitView: view}
	if timeout > 0 {
		c.Timeout = durationpb.New(timeout)
	}
	b.send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Claim{Claim: c}})
	for {
		if r := b.nextCtl().GetClaimResult(); r != nil && r.ClaimId == id {
			return r
		}
	}
}

// A claim with COMMIT_VIEW_ENCODED gets each commit as its bytes and one
// path a delta, without the typed deltas; the same question asked again of
// a claimant with the full view gets both forms.
func TestEncodedViewClaim(t *testing.T) {
	e := startEnv(t, envOpts{bridge: bridge.Config{Policy: bridge.PolicyClosed}})
	allowOpens(t, e)
	enc := openBackend(t, e, "encoded", 0)
	if r := enc.claimView(1, prefix("doc"), 300*time.Millisecond, v1.CommitView_COMMIT_VIEW_ENCODED); !r.Granted {
		t.Fatalf("claim refused: %v", r.Reasons)
	}
	full := openBackend(t, e, "full", 0)
	if r := full.claimView(1, prefix("doc"), 0, v1.CommitView_COMMIT_VIEW_UNSPECIFIED); !r.Granted {
		t.Fatalf("claim refused: %v", r.Reasons)
	}
	if r := full.claimView(2, prefix("x"), 0, v1.CommitView(7)); r.Granted || len(r.Reasons) != 1 || r.Reasons[0].Code != string(bridge.ReasonInvalidClaim) {
		t.Fatalf("a claim of an unknown view: %v, want refused with %s", r, bridge.ReasonInvalidClaim)
	}

	p := dialPeer(t, e, peer.Options{})
	d, err := p.Share(ctxT(t), "doc1", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	start := cursorOf(t, e.gw, "doc1")
	if _, err := set(d, "title", text("hello")); err != nil {
		t.Fatal(err)
	}

	// The older claim is asked first, in its view; it does not answer.
	q := enc.nextQuestion()
	c := q.GetAccept().GetCommit()
	if len(c.GetDeltas()) != 0 || len(c.GetTag()) != 0 {
		t.Fatalf("encoded view carries typed deltas %v or a tag %x", c.GetDeltas(), c.GetTag())
	}
	got, err := commit.Decode(c.GetEncoded())
	if err != nil {
		t.Fatalf("encoded bytes: %v", err)
	}
	if len(got.Deltas) != 1 || got.Deltas[0].Ref.Key != "title" || got.Deltas[0].Value.Str != "hello" {
		t.Fatalf("encoded commit %+v", got)
	}
	if ps := c.GetPaths(); len(ps) != 1 || !slices.Equal(ps[0].GetSteps(), []string{"title"}) {
		t.Fatalf("paths %v, want [[title]]", ps)
	}

	// Its timeout passes it to the full claimant, which sees both forms.
	q2 := full.nextQuestion()
	c2 := q2.GetAccept().GetCommit()
	if q2.Attempt != 2 || len(c2.GetPaths()) != 0 || len(c2.GetDeltas()) != 1 || !slices.Equal(c2.GetDeltas()[0].GetPath().GetSteps(), []string{"title"}) {
		t.Fatalf("full view: attempt %d, paths %v, deltas %v", q2.Attempt, c2.GetPaths(), c2.GetDeltas())
	}
	if string(c2.GetEncoded()) != string(c.GetEncoded()) {
		t.Fatal("the two views carry different bytes")
	}
	full.answer(accept(q2.Id))
	waitCursor(t, e.gw, "doc1", start+1)
	if v := keysOf(t, e, "doc1")["title"]; v != "hello" {
		t.Fatalf("title %q after the full claimant accepted", v)
	}
}

// A question too large for one message in its claimant's view passes that
// claimant over: with nobody else it is refused with question-too-large,
// and an encoded claimant, whose view is half the size, is asked instead.
func TestQuestionTooLargeForItsView(t *testing.T) {
	e := startEnv(t, envOpts{bridge: bridge.Config{Policy: bridge.PolicyClosed, MaxSendMessageBytes: 6000}})
	allowOpens(t, e)
	full := openBackend(t, e, "full", 0)
	if r := full.claimView(1, prefix("doc"), 0, v1.CommitView_COMMIT_VIEW_FULL); !r.Granted {
		t.Fatalf("claim refused: %v", r.Reasons)
	}
	p := dialPeer(t, e, peer.Options{})
	d, err := p.Share(ctxT(t), "doc1", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	// About 3.6 kB in the bytes, and as much again in the typed view.
	big := text(strings.Repeat("é", 1800))
	seq, err := set(d, "title", big)
	if err != nil {
		t.Fatal(err)
	}
	r := nextEvent[peer.Refused](t, d)
	if !r.Mine || r.Seq != seq || len(r.Reasons) != 1 || r.Reasons[0].Code != string(bridge.ReasonQuestionTooLarge) {
		t.Fatalf("refused %+v, want our seq %d with %s", r, seq, bridge.ReasonQuestionTooLarge)
	}

	enc := openBackend(t, e, "encoded", 0)
	if r := enc.claimView(1, prefix("doc"), 0, v1.CommitView_COMMIT_VIEW_ENCODED); !r.Granted {
		t.Fatalf("claim refused: %v", r.Reasons)
	}
	start := cursorOf(t, e.gw, "doc1")
	if _, err := set(d, "body", big); err != nil {
		t.Fatal(err)
	}
	q := enc.nextQuestion()
	if len(q.GetAccept().GetCommit().GetEncoded()) < 3600 || len(q.GetAccept().GetCommit().GetDeltas()) != 0 {
		t.Fatalf("the encoded claimant got %v", q.GetAccept().GetCommit())
	}
	enc.answer(accept(q.Id))
	waitCursor(t, e.gw, "doc1", start+1)
	select {
	case q := <-full.qs:
		t.Fatalf("the full claimant was asked %v", q)
	default:
	}
}
