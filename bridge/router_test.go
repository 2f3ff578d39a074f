package bridge_test

import (
	"testing"
	"time"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/gateway"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol/commit"
)

// judge asks the bridge directly, as the gateway's hub would, and returns
// a channel with the verdict.
func judge(b *bridge.Server, doc string, origin gateway.Origin) <-chan gateway.Verdict {
	root := commit.NewID()
	c := commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root, Ref: commit.ObjectKey("k"), Value: commit.TextValue("v")}}}
	bs, err := commit.Encode(c)
	if err != nil {
		panic(err)
	}
	out := make(chan gateway.Verdict, 1)
	b.Judge(&gateway.AcceptRequest{Document: doc, Origin: origin, Commit: c, Bytes: bs, Paths: [][]string{{"k"}}}, func(v gateway.Verdict) { out <- v })
	return out
}

func verdictOf(t *testing.T, ch <-chan gateway.Verdict) gateway.Verdict {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatal("no verdict")
	}
	return gateway.Verdict{}
}

func code(v gateway.Verdict) string {
	if v.Accepted() {
		return ""
	}
	return v.Reasons[0].Code
}

var link = gateway.Origin{Kind: "link", ID: "c7"}

func TestMostSpecificClaimWins(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true})
	broad := openBackend(t, e, "broad", 0)
	broad.mustClaim(1, prefix(""), 0, kAccept)
	narrow := openBackend(t, e, "narrow", 0)
	narrow.mustClaim(1, prefix("users/"), 0, kAccept)
	exactly := openBackend(t, e, "exact", 0)
	exactly.mustClaim(1, exact("users/ann"), 0, kAccept)

	for _, tc := range []struct {
		doc  string
		want *backend
	}{{"users/ann", exactly}, {"users/bob", narrow}, {"other", broad}} {
		v := judge(e.b, tc.doc, link)
		q := tc.want.nextQuestion()
		if q.GetAccept().GetDocument() != tc.doc || q.ClaimId != 1 || q.Attempt != 1 {
			t.Fatalf("%s: question %v", tc.doc, q)
		}
		if q.GetAccept().GetOrigin().GetPeer().GetConnectionId() != 7 {
			t.Fatalf("origin %v, want connection 7", q.GetAccept().GetOrigin())
		}
		tc.want.answer(accept(q.Id))
		if got := verdictOf(t, v); !got.Accepted() {
			t.Fatalf("%s: %+v", tc.doc, got)
		}
	}
}

// A question unanswered within its timeout is withdrawn and asked of the
// next claimant; the late answer to the first is ignored and counted.
func TestTimeoutAsksTheNextClaimant(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true, bridge: bridge.Config{Policy: bridge.PolicyClosed}})
	slow := openBackend(t, e, "slow", 0)
	slow.mustClaim(1, prefix(""), 50*time.Millisecond, kAccept)
	quick := openBackend(t, e, "quick", 0)
	quick.mustClaim(2, prefix(""), 0, kAccept)
	v := judge(e.b, "d", link)
	q1 := slow.nextQuestion()
	q2 := quick.nextQuestion()
	if q2.Attempt != 2 || q2.ClaimId != 2 {
		t.Fatalf("second question %v, want attempt 2 under claim 2", q2)
	}
	w := slow.nextCtl().GetWithdrawn()
	if w == nil || len(w.QuestionIds) != 1 || w.QuestionIds[0] != q1.Id || w.Reason != v1.WithdrawReason_WITHDRAW_REASON_TIMEOUT {
		t.Fatalf("withdrawn %v, want question %d timeout", w, q1.Id)
	}
	ignored := e.b.Stats().Ignored.Load()
	slow.answer(accept(q1.Id)) // too late
	quick.answer(refuse(q2.Id, &v1.Reason{Code: "nope"}))
	if got := verdictOf(t, v); code(got) != "nope" {
		t.Fatalf("verdict %+v, want the second claimant's refusal", got)
	}
	// The late answer and a repeat of the final one are both ignored.
	quick.answer(accept(q2.Id))
	quick.answer(accept(999))
	slow.sync()
	quick.sync()
	if got := e.b.Stats().Ignored.Load() - ignored; got != 3 {
		t.Fatalf("%d answers ignored, want 3", got)
	}
}

// Every claimant timing out under closed refuses authority-timeout; under
// open it accepts.
func TestAllClaimantsTimeOut(t *testing.T) {
	for _, tc := range []struct {
		policy bridge.Policy
		want   string
	}{{bridge.PolicyClosed, string(bridge.ReasonAuthorityTimeout)}, {bridge.PolicyOpen, ""}} {
		t.Run(string(tc.policy), func(t *testing.T) {
			e := startEnv(t, envOpts{bufconn: true, bridge: bridge.Config{Policy: tc.policy}})
			mute := openBackend(t, e, "mute", 0)
			mute.mustClaim(1, prefix(""), 20*time.Millisecond, kAccept)
			v := judge(e.b, "d", link)
			mute.nextQuestion()
			if got := verdictOf(t, v); code(got) != tc.want {
				t.Fatalf("verdict %+v, want %q", got, tc.want)
			}
		})
	}
}

// Deadlines are per claim: a question with a short timeout, asked after
// one with a long timeout, times out first and on time, and the long one
// stays answerable.
func TestShortTimeoutAfterLongOne(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true, bridge: bridge.Config{Policy: bridge.PolicyClosed}})
	patient := openBackend(t, e, "patient", 0)
	patient.mustClaim(1, prefix("slow/"), time.Hour, kAccept)
	hasty := openBackend(t, e, "hasty", 0)
	hasty.mustClaim(1, prefix("fast/"), 30*time.Millisecond, kAccept)
	long := judge(e.b, "slow/d", link)
	ql := patient.nextQuestion()
	short := judge(e.b, "fast/d", link)
	hasty.nextQuestion()
	if got := verdictOf(t, short); code(got) != string(bridge.ReasonAuthorityTimeout) {
		t.Fatalf("short question's verdict %+v, want %s", got, bridge.ReasonAuthorityTimeout)
	}
	select {
	case v := <-long:
		t.Fatalf("the long question ended early: %+v", v)
	default:
	}
	patient.answer(accept(ql.Id))
	if got := verdictOf(t, long); !got.Accepted() {
		t.Fatalf("long question's verdict %+v, want accepted", got)
	}
}

// Nobody claims: closed refuses no-authority, open accepts; a per-name rule
// beats the default.
func TestFallbackRules(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true, bridge: bridge.Config{
		Policy:   bridge.PolicyOpen,
		Fallback: []bridge.FallbackRule{{Prefix: "secure/", Policy: bridge.PolicyClosed}, {Prefix: "secure/open", Exact: true, Policy: bridge.PolicyOpen}},
	}})
	for doc, want := range map[string]string{"plain": "", "secure/x": string(bridge.ReasonNoAuthority), "secure/open": ""} {
		if got := verdictOf(t, judge(e.b, doc, link)); code(got) != want {
			t.Fatalf("%s: %+v, want %q", doc, got, want)
		}
	}
}

// Malformed answers and failures refuse accept-threw; they never accept.
func TestMalformedAnswersRefuse(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true})
	a := openBackend(t, e, "a", 0)
	a.mustClaim(1, prefix(""), 0, kAccept)
	for name, mk := range map[string]func(uint64) *v1.Answer{
		"default": func(id uint64) *v1.Answer {
			return &v1.Answer{QuestionId: id, Kind: &v1.Answer_Accept{Accept: &v1.AcceptAnswer{}}}
		},
		"accept+reasons": func(id uint64) *v1.Answer {
			return &v1.Answer{QuestionId: id, Kind: &v1.Answer_Accept{Accept: &v1.AcceptAnswer{Accepted: true, Reasons: []*v1.Reason{{Code: "x"}}}}}
		},
		"empty code": func(id uint64) *v1.Answer { return refuse(id, &v1.Reason{Message: "m"}) },
		"failure": func(id uint64) *v1.Answer {
			return &v1.Answer{QuestionId: id, Kind: &v1.Answer_Failure{Failure: &v1.Failure{Message: "db down"}}}
		},
		"wrong kind": func(id uint64) *v1.Answer {
			return &v1.Answer{QuestionId: id, Kind: &v1.Answer_MayOpen{MayOpen: &v1.MayOpenAnswer{Allowed: true}}}
		},
		"unset": func(id uint64) *v1.Answer { return &v1.Answer{QuestionId: id} },
	} {
		v := judge(e.b, "d", link)
		q := a.nextQuestion()
		a.answer(mk(q.Id))
		if got := verdictOf(t, v); code(got) != "accept-threw" {
			t.Fatalf("%s: %+v, want accept-threw", name, got)
		}
	}
}

// A stream holds at most max_in_flight unanswered; the rest wait and are
// sent as answers free room.
func TestInFlightBoundPerStream(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true})
	a := openBackend(t, e, "a", 2)
	if a.welcome.Limits.MaxInFlight != 2 {
		t.Fatalf("limits %v, want max_in_flight 2", a.welcome.Limits)
	}
	a.mustClaim(1, prefix(""), 0, kAccept)
	var vs []<-chan gateway.Verdict
	for range 5 {
		vs = append(vs, judge(e.b, "d", link))
	}
	q1, q2 := a.nextQuestion(), a.nextQuestion()
	select {
	case q := <-a.qs:
		t.Fatalf("a third question %v past max_in_flight", q)
	default:
	}
	a.answer(accept(q1.Id))
	q3 := a.nextQuestion()
	a.answer(accept(q2.Id), accept(q3.Id))
	q4, q5 := a.nextQuestion(), a.nextQuestion()
	a.answer(accept(q5.Id), accept(q4.Id))
	for i, v := range vs {
		if got := verdictOf(t, v); !got.Accepted() {
			t.Fatalf("%d: %+v", i, got)
		}
	}
}

// Past the per-document bound questions are refused authority-busy, never
// queued without end.
func TestInFlightBoundPerDocument(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true, bridge: bridge.Config{MaxInFlightPerDocument: 3}})
	a := openBackend(t, e, "a", 0)
	a.mustClaim(1, prefix(""), 0, kAccept)
	var held []<-chan gateway.Verdict
	for range 3 {
		held = append(held, judge(e.b, "d", link))
	}
	if got := verdictOf(t, judge(e.b, "d", link)); code(got) != string(bridge.ReasonAuthorityBusy) {
		t.Fatalf("fourth: %+v, want authority-busy", got)
	}
	other := judge(e.b, "other", link) // another document is not bounded by d
	for range 4 {
		q := a.nextQuestion()
		a.answer(accept(q.Id))
	}
	for _, v := range append(held, other) {
		if got := verdictOf(t, v); !got.Accepted() {
			t.Fatalf("%+v", got)
		}
	}
}

// A backend's write is never asked of the stream that wrote it.
func TestOwnWritesAreNotAskedOfTheWriter(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true, bridge: bridge.Config{Policy: bridge.PolicyClosed}})
	a := openBackend(t, e, "a", 0)
	a.mustClaim(1, prefix(""), 0, kAccept)
	own := gateway.Origin{Kind: "backend", ID: "b" + itoa(a.welcome.StreamId) + ".1.1:a"}
	// The only claimant wrote it: nobody else claims, closed refuses.
	if got := verdictOf(t, judge(e.b, "d", own)); code(got) != string(bridge.ReasonNoAuthority) {
		t.Fatalf("%+v, want no-authority", got)
	}
	b := openBackend(t, e, "b", 0)
	b.mustClaim(1, prefix(""), 0, kAccept)
	v := judge(e.b, "d", own)
	q := b.nextQuestion()
	if bo := q.GetAccept().GetOrigin().GetBackend(); bo.GetStreamId() != a.welcome.StreamId || bo.GetName() != "a" || bo.GetWriteId() != 1 {
		t.Fatalf("origin %v", q.GetAccept().GetOrigin())
	}
	b.answer(accept(q.Id))
	if got := verdictOf(t, v); !got.Accepted() {
		t.Fatalf("%+v", got)
	}
	select {
	case q := <-a.qs:
		t.Fatalf("the writer was asked about its own write: %v", q)
	default:
	}
}

func itoa(n uint64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// Release ends a claim; Released confirms it, known or not.
func TestClaimsAndRelease(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true, bridge: bridge.Config{MaxClaimsPerStream: 2}})
	a := openBackend(t, e, "a", 0)
	a.mustClaim(1, prefix("x"), 0, kAccept)
	for _, tc := range []struct {
		c    *v1.ClaimResult
		want bridge.Policy
	}{
		{a.claim(1, prefix("y"), 0, kAccept), bridge.Policy(bridge.ReasonDuplicateClaimID)},
		{a.claim(2, nil, 0, kAccept), bridge.Policy(bridge.ReasonInvalidClaim)},
		{a.claim(3, prefix("y"), 0), bridge.Policy(bridge.ReasonInvalidClaim)},
		{a.claim(4, prefix("y"), 0, kAccept, kAccept), bridge.Policy(bridge.ReasonInvalidClaim)},
		{a.claim(5, prefix("y"), 0, v1.QuestionKind_QUESTION_KIND_UNSPECIFIED), bridge.Policy(bridge.ReasonInvalidClaim)},
	} {
		if tc.c.Granted || len(tc.c.Reasons) != 1 || tc.c.Reasons[0].Code != string(tc.want) {
			t.Fatalf("%v, want refused %s", tc.c, tc.want)
		}
	}
	a.mustClaim(6, prefix("y"), 0, kAccept)
	if r := a.claim(7, prefix("z"), 0, kAccept); r.Granted || r.Reasons[0].Code != string(bridge.ReasonTooManyClaims) {
		t.Fatalf("%v, want too-many-claims", r)
	}
	a.send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Release{Release: &v1.Release{ClaimId: 1}}})
	if r := a.nextCtl().GetReleased(); r == nil || r.ClaimId != 1 {
		t.Fatalf("released %v", r)
	}
	a.send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Release{Release: &v1.Release{ClaimId: 42}}})
	if r := a.nextCtl().GetReleased(); r == nil || r.ClaimId != 42 {
		t.Fatalf("released %v", r)
	}
	// x is no longer claimed: open accepts without asking.
	if got := verdictOf(t, judge(e.b, "x1", link)); !got.Accepted() {
		t.Fatalf("%+v", got)
	}
	select {
	case q := <-a.qs:
		t.Fatalf("asked under a released claim: %v", q)
	default:
	}
}
