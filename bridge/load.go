package bridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/weftgate/weftgate/gateway"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol"
)

// Load asks the document's load claimant for a document the gateway does
// not hold (gateway.Loader). No claimant: not found. Timed out: an
// authority-timeout error whatever the policy, since "not found" could let
// a peer create a second document under the name. The answer's cursor is
// where the gateway's numbering of the document's commits continues.
func (s *Server) Load(ctx context.Context, req gateway.LoadRequest) (gateway.Loaded, bool, error) {
	name := req.Document
	q := func() *v1.Question {
		lq := &v1.LoadQuestion{Document: name}
		if o := req.Opener; o != nil {
			lq.Peer = peerToProto(o.Identity, o.RemoteAddr, o.ID)
		}
		return &v1.Question{Kind: &v1.Question_Load{Load: lq}}
	}
	type result struct {
		doc gateway.Loaded
		ok  bool
		err error
	}
	done := make(chan result, 1)
	a := &ask{
		kind: v1.QuestionKind_QUESTION_KIND_LOAD, name: name, doc: name, build: q,
		answered: func(ans *v1.Answer) {
			r := result{}
			r.doc, r.ok, r.err = s.loadResult(ans)
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
		return r.doc, r.ok, r.err
	case <-ctx.Done():
		s.router.cancel(a)
		return gateway.Loaded{}, false, ctx.Err()
	}
}

var errLoadFailed = errors.New("bridge: the load authority failed")

func (s *Server) loadResult(a *v1.Answer) (gateway.Loaded, bool, error) {
	k, ok := a.Kind.(*v1.Answer_Load)
	if !ok || k.Load == nil {
		return gateway.Loaded{}, false, errLoadFailed
	}
	if !k.Load.Found {
		return gateway.Loaded{}, false, nil
	}
	root, state, err := stateFromProto(k.Load.State, s.cfg.CommitLimits)
	if err != nil {
		// Not the state's own reason: a peer whose open this declines
		// sent nothing wrong.
		return gateway.Loaded{}, false, fmt.Errorf("%w: its state: %v", errLoadFailed, err)
	}
	return gateway.Loaded{Root: root, State: state, Cursor: k.Load.Cursor}, true, nil
}
