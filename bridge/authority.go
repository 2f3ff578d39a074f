package bridge

import (
	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/admission"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/internal/pbconv"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/frame"
)

var (
	_ gateway.Authority = (*Server)(nil)
	_ gateway.Loader    = (*Server)(nil)
)

// Judge asks the document's accept claimant whether a commit may land
// (gateway.Authority). It returns at once; the verdict comes later.
func (s *Server) Judge(req *gateway.AcceptRequest, reply func(gateway.Verdict)) {
	s.activity(req.Document)
	var exclude uint64
	if req.Origin.Kind == "backend" {
		if b, ok := parseBackendOrigin(req.Origin.ID); ok {
			// A backend never judges its own write.
			exclude = b.stream
			id, paths, inner := req.Origin.ID, req.Paths, reply
			reply = func(v gateway.Verdict) {
				s.notes.record(id, paths, v)
				inner(v)
			}
		}
	}
	name := req.Document
	s.router.start(&ask{kind: v1.QuestionKind_QUESTION_KIND_ACCEPT, name: name, doc: name, exclude: exclude, accept: req, verdict: reply})
}

// acceptQuestion asks about req, with its commit in both forms or, for a
// claim that asked for COMMIT_VIEW_ENCODED, as its bytes and paths.
func acceptQuestion(req *gateway.AcceptRequest, encoded bool) *v1.Question {
	var c *v1.Commit
	if encoded {
		c = pbconv.CommitEncodedTo(req.Bytes, len(req.Commit.Deltas), req.Paths)
	} else {
		c = pbconv.CommitTo(req.Commit, req.Bytes, req.Paths)
	}
	m := new(acceptMessages) // one allocation for the three
	m.accept = v1.AcceptQuestion{
		Document: req.Document,
		Cursor:   req.Cursor,
		Origin:   originToProto(req.Origin.Kind, req.Origin.ID, req.Origin),
		Commit:   c,
		State:    req.State,
	}
	m.kind.Accept = &m.accept
	m.q.Kind = &m.kind
	return &m.q
}

type acceptMessages struct {
	q      v1.Question
	kind   v1.Question_Accept
	accept v1.AcceptQuestion
}

func threw(msg string) gateway.Verdict { return gateway.Refuse(protocol.AcceptThrew, msg) }

// acceptVerdict reads an accept answer; anything malformed refuses.
func acceptVerdict(a *v1.Answer) gateway.Verdict {
	switch k := a.Kind.(type) {
	case *v1.Answer_Accept:
		if k.Accept == nil {
			return threw("the answer has no verdict")
		}
		switch {
		case k.Accept.Accepted && len(k.Accept.Reasons) == 0:
			return gateway.Verdict{}
		case !k.Accept.Accepted && len(k.Accept.Reasons) > 0:
			rs, ok := reasonsFromProto(k.Accept.Reasons)
			if !ok {
				return threw("a refusal reason has no code")
			}
			return gateway.Verdict{Reasons: rs}
		}
		return threw("the verdict and its reasons disagree")
	case *v1.Answer_Failure:
		msg := "the authority failed"
		if k.Failure != nil && k.Failure.Message != "" {
			msg = k.Failure.Message
		}
		return threw(msg)
	}
	return threw("the answer is not an accept answer")
}

// acceptFallback is the policy's verdict.
func acceptFallback(cfg *Config, name string, fb fallback) gateway.Verdict {
	switch fb {
	case fbBusy:
		return gateway.Refuse(ReasonAuthorityBusy, "the authority has too many questions unanswered; retry later")
	case fbTooLarge:
		return gateway.Refuse(ReasonQuestionTooLarge, "the commit is too large to ask the authority about")
	}
	if cfg.policyFor(name) == PolicyOpen {
		return gateway.Verdict{}
	}
	switch fb {
	case fbNone:
		return gateway.Refuse(ReasonNoAuthority, "no authority claims this document")
	case fbGone:
		return gateway.Refuse(ReasonAuthorityGone, "the authority is shutting down")
	}
	return gateway.Refuse(ReasonAuthorityTimeout, "the authority did not answer in time")
}

// MayOpen asks the document's may_open claimant whether a peer may open it
// (gateway.Authority).
func (s *Server) MayOpen(req gateway.OpenRequest, reply func(error)) {
	name := req.Document
	if !req.Exists {
		s.activity(name)
	}
	q := func() *v1.Question {
		mq := &v1.MayOpenQuestion{
			Document: name,
			Peer:     peerToProto(req.Identity, req.RemoteAddr, req.Link),
			Exists:   req.Exists,
			Want:     req.Want,
		}
		if req.Root != nil {
			mq.Root = rootToProto(*req.Root)
		}
		return &v1.Question{Kind: &v1.Question_MayOpen{MayOpen: mq}}
	}
	s.router.start(&ask{
		kind: v1.QuestionKind_QUESTION_KIND_MAY_OPEN, name: name, doc: name, build: q,
		answered: func(a *v1.Answer) { reply(mayOpenVerdict(a)) },
		fellBack: func(fb fallback) { reply(s.openFallback(name, fb)) },
	})
}

func mayOpenVerdict(a *v1.Answer) error {
	switch k := a.Kind.(type) {
	case *v1.Answer_MayOpen:
		if k.MayOpen == nil {
			return protocol.Errorf(protocol.AcceptThrew, "the answer has no verdict")
		}
		if k.MayOpen.Allowed && len(k.MayOpen.Reasons) == 0 {
			return nil
		}
		rs, ok := reasonsFromProto(k.MayOpen.Reasons)
		if !k.MayOpen.Allowed && ok && len(rs) > 0 {
			return &protocol.Error{Reason: protocol.Reason(rs[0].Code), Message: rs[0].Message, Path: rs[0].Path, Offset: -1}
		}
		return protocol.Errorf(protocol.AcceptThrew, "the verdict and its reasons disagree")
	case *v1.Answer_Failure:
		return protocol.Errorf(protocol.AcceptThrew, "the authority failed")
	}
	return protocol.Errorf(protocol.AcceptThrew, "the answer is not a may_open answer")
}

func (s *Server) openFallback(name string, fb fallback) error {
	v := acceptFallback(&s.cfg, name, fb)
	if v.Accepted() {
		return nil
	}
	return reasonError(v.Reasons[0])
}

func reasonError(r frame.Reason) error {
	return &protocol.Error{Reason: protocol.Reason(r.Code), Message: r.Message, Path: r.Path, Offset: -1}
}

// peerToProto is a link's Peer: its identity, address and connection
// number ("c7" is 7; 0 when unknown).
func peerToProto(id admission.Identity, addr, link string) *v1.Peer {
	n, _ := connectionID(link)
	return &v1.Peer{Identity: identityToProto(id), RemoteAddr: addr, ConnectionId: n}
}
