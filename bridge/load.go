package bridge

import (
	"context"
	"errors"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Load asks the document's load claimant for a document the gateway does
// not hold (gateway.Loader). No claimant: not found. Timed out: an
// authority-timeout error whatever the policy, since "not found" could let
// a peer create a second document under the name. The gateway does not
// call it yet, and LoadAnswer.cursor has nowhere to go in gateway.Loader.
func (s *Server) Load(ctx context.Context, name string) (frame.Root, []byte, bool, error) {
	q := func() *v1.Question {
		return &v1.Question{Kind: &v1.Question_Load{Load: &v1.LoadQuestion{Document: name}}}
	}
	type result struct {
		root  frame.Root
		state []byte
		ok    bool
		err   error
	}
	done := make(chan result, 1)
	a := &ask{
		kind: v1.QuestionKind_QUESTION_KIND_LOAD, name: name, doc: name, build: q,
		answered: func(ans *v1.Answer) {
			r := result{}
			r.root, r.state, r.ok, r.err = s.loadResult(ans)
			done <- r
		},
		fellBack: func(fb fallback) {
			switch fb {
			case fbNone:
				done <- result{}
			case fbBusy:
				done <- result{err: protocol.Errorf(ReasonAuthorityBusy, "the load authority is busy")}
			default:
				done <- result{err: protocol.Errorf(ReasonAuthorityTimeout, "the load authority did not answer in time")}
			}
		},
	}
	s.router.start(a)
	select {
	case r := <-done:
		return r.root, r.state, r.ok, r.err
	case <-ctx.Done():
		s.router.cancel(a)
		return frame.Root{}, nil, false, ctx.Err()
	}
}

var errLoadFailed = errors.New("bridge: the load authority failed")

func (s *Server) loadResult(a *v1.Answer) (frame.Root, []byte, bool, error) {
	k, ok := a.Kind.(*v1.Answer_Load)
	if !ok || k.Load == nil {
		return frame.Root{}, nil, false, errLoadFailed
	}
	if !k.Load.Found {
		return frame.Root{}, nil, false, nil
	}
	root, state, err := stateFromProto(k.Load.State, s.cfg.CommitLimits)
	if err != nil {
		return frame.Root{}, nil, false, err
	}
	return root, state, true, nil
}
