package bridge

import (
	"google.golang.org/protobuf/types/known/durationpb"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol"
)

// patternFromProto validates a Pattern.
func patternFromProto(p *v1.Pattern) (pattern, bool) {
	if p == nil {
		return pattern{}, false
	}
	switch m := p.Match.(type) {
	case *v1.Pattern_Exact:
		return pattern{exact: true, text: m.Exact}, len(m.Exact) <= MaxPatternBytes
	case *v1.Pattern_Prefix:
		return pattern{text: m.Prefix}, len(m.Prefix) <= MaxPatternBytes
	}
	return pattern{}, false
}

func claimRefused(id uint64, code protocol.Reason, msg string) *v1.ClaimResult {
	return &v1.ClaimResult{ClaimId: id, Reasons: []*v1.Reason{{Code: string(code), Message: msg}}}
}

// claim grants or refuses one Claim from st.
func (r *router) claim(st *stream, c *v1.Claim) *v1.ClaimResult {
	if c == nil || c.ClaimId == 0 {
		return claimRefused(0, ReasonInvalidClaim, "claim_id must not be 0")
	}
	pat, ok := patternFromProto(c.Pattern)
	if !ok {
		return claimRefused(c.ClaimId, ReasonInvalidClaim, "a pattern sets exact or prefix, at most 1024 bytes")
	}
	var kinds uint32
	for _, k := range c.Kinds {
		bit := uint32(1) << uint(k)
		if k <= v1.QuestionKind_QUESTION_KIND_UNSPECIFIED || k > v1.QuestionKind_QUESTION_KIND_CALL || kinds&bit != 0 {
			return claimRefused(c.ClaimId, ReasonInvalidClaim, "kinds are known question kinds, each at most once")
		}
		kinds |= bit
	}
	if kinds == 0 {
		return claimRefused(c.ClaimId, ReasonInvalidClaim, "a claim names at least one question kind")
	}
	var encoded bool
	switch c.CommitView {
	case v1.CommitView_COMMIT_VIEW_UNSPECIFIED, v1.CommitView_COMMIT_VIEW_FULL:
	case v1.CommitView_COMMIT_VIEW_ENCODED:
		encoded = true
	default:
		return claimRefused(c.ClaimId, ReasonInvalidClaim, "commit_view is not a known view")
	}
	timeout := r.cfg.QuestionTimeout
	if c.Timeout != nil {
		if err := c.Timeout.CheckValid(); err != nil || c.Timeout.AsDuration() < 0 {
			return claimRefused(c.ClaimId, ReasonInvalidClaim, "the timeout is a valid, non-negative duration")
		}
		if d := c.Timeout.AsDuration(); d > 0 {
			timeout = min(d, r.cfg.MaxQuestionTimeout)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case st.gone:
		return claimRefused(c.ClaimId, ReasonAuthorityGone, "the stream is ending")
	case st.claims[c.ClaimId] != nil:
		return claimRefused(c.ClaimId, ReasonDuplicateClaimID, "a claim with this id is in force")
	case len(st.claims) >= r.cfg.MaxClaimsPerStream:
		return claimRefused(c.ClaimId, ReasonTooManyClaims, "the stream has as many claims as it may")
	}
	cl := &claim{st: st, id: c.ClaimId, pat: pat, kinds: kinds, timeout: timeout, encoded: encoded}
	st.claims[c.ClaimId] = cl
	r.claims = append(r.claims, cl)
	return &v1.ClaimResult{ClaimId: c.ClaimId, Granted: true}
}

// release ends one claim of st; unknown ids are fine.
func (r *router) release(st *stream, id uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cl := st.claims[id]
	if cl == nil {
		return
	}
	delete(st.claims, id)
	for i, c := range r.claims {
		if c == cl {
			r.claims = append(r.claims[:i], r.claims[i+1:]...)
			break
		}
	}
}

// limits is what Welcome announces for st.
func (r *router) limits(st *stream) *v1.Limits {
	lim := r.cfg.CommitLimits
	maxCommit := lim.MaxCommitBytes
	if maxCommit <= 0 {
		maxCommit = 1 << 20
	}
	return &v1.Limits{
		MaxInFlight:      uint32(st.max),
		MaxClaims:        uint32(r.cfg.MaxClaimsPerStream),
		MaxPendingWrites: uint32(r.cfg.MaxPendingWrites),
		MaxCommitBytes:   uint32(maxCommit),
		MaxMessageBytes:  uint32(min(r.cfg.MaxRecvMessageBytes, r.cfg.MaxSendMessageBytes)),
		DefaultTimeout:   durationpb.New(r.cfg.QuestionTimeout),
		MaxTimeout:       durationpb.New(r.cfg.MaxQuestionTimeout),
	}
}
