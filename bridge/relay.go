package bridge

import (
	"context"
	"slices"
	"time"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// Relay carries questions between gateway nodes that share a log (decision
// 034): a node whose own backends do not claim a question asks a node
// whose backends do, so a backend connected to any one node serves its
// claims on every node, whatever language it is written in.
type Relay interface {
	// Ask puts q, about name, to another node whose claims take it, and
	// returns that node's backend's answer. ok is false when no other
	// node's backend took it (none claims it, or each fell back).
	Ask(ctx context.Context, kind v1.QuestionKind, name string, q *v1.Question) (ans *v1.Answer, ok bool, err error)
	// Claims tells the relay the claims in force on this node now. It is
	// called after every change and must not block on the network.
	Claims(cs []RelayClaim)
}

// RelayClaim is a claim in force on a node, as other nodes route by it.
type RelayClaim struct {
	Exact bool   `json:"exact,omitempty"`
	Text  string `json:"text"`
	Kinds uint32 `json:"kinds"` // bit 1<<kind per QuestionKind
}

// Takes says whether the claim takes a question of kind about name.
func (c RelayClaim) Takes(kind v1.QuestionKind, name string) bool {
	return c.Kinds&(1<<uint(kind)) != 0 && pattern{exact: c.Exact, text: c.Text}.match(name)
}

// Rank orders claims by specificity, as the router does: an exact name
// first, then the longer prefix.
func (c RelayClaim) Rank() int { return pattern{exact: c.Exact, text: c.Text}.rank() }

// maxRelayed bounds the questions this node has out at other nodes at once;
// past it a question falls back as busy.
const maxRelayed = 1024

// relay asks another node about a, which no local claimant takes.
func (r *router) relay(a *ask) {
	select {
	case r.relaySlots <- struct{}{}:
	default:
		r.fellBack(a, fbBusy)
		return
	}
	q := a.form(false).q
	timeout := r.cfg.QuestionTimeout * max(1, time.Duration(r.cfg.MaxAttempts))
	go func() {
		defer func() { <-r.relaySlots }()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		ans, ok, err := r.cfg.Relay.Ask(ctx, a.kind, a.name, q)
		switch {
		case err != nil:
			r.stats.TimedOut.Add(1)
			r.fellBack(a, fbTimeout)
		case !ok:
			r.fellBack(a, fbNone)
		default:
			r.stats.Relayed.Add(1)
			if a.verdict != nil {
				a.verdict(acceptVerdict(ans))
				return
			}
			a.answered(ans)
		}
	}()
}

// publishClaims tells the relay the claims in force, once each.
func (r *router) publishClaims() {
	if r.cfg.Relay == nil {
		return
	}
	r.mu.Lock()
	cs := make([]RelayClaim, 0, len(r.claims))
	for _, c := range r.claims {
		rc := RelayClaim{Exact: c.pat.exact, Text: c.pat.text, Kinds: c.kinds}
		if !slices.Contains(cs, rc) {
			cs = append(cs, rc)
		}
	}
	r.mu.Unlock()
	r.cfg.Relay.Claims(cs)
}

// AnswerRelayed puts a question another node relayed to this node's own
// claimants and returns the answer; ok is false when none took it (the
// asker then falls back, or asks another node). It never relays onward.
func (s *Server) AnswerRelayed(ctx context.Context, kind v1.QuestionKind, name string, q *v1.Question) (*v1.Answer, bool) {
	res := make(chan *v1.Answer, 1)
	a := &ask{kind: kind, name: name, relayed: true, build: func() *v1.Question { return q }}
	if kind == v1.QuestionKind_QUESTION_KIND_ACCEPT {
		a.doc = name
	}
	a.answered = func(ans *v1.Answer) { res <- ans }
	a.fellBack = func(fallback) { res <- nil }
	s.router.start(a)
	select {
	case ans := <-res:
		return ans, ans != nil
	case <-ctx.Done():
		s.router.cancel(a)
		return nil, false
	}
}
