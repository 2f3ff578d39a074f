package bridge

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/gateway/requests"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

var _ requests.Calls = (*Server)(nil)

// errCallFailed answers a peer "failed": the backend failed, timed out or
// was busy. requests.Calls has no way to add reasons to "failed".
var errCallFailed = errors.New("bridge: the call failed")

// Call asks the call claimant of the name to answer a request-channel call
// (requests.Calls); progress answers reach the peer as they come. No
// claimant answers "missing".
func (s *Server) Call(ctx context.Context, c requests.Call, progress func(json.RawMessage)) (json.RawMessage, error) {
	q := func() *v1.Question {
		return &v1.Question{Kind: &v1.Question_Call{Call: &v1.CallQuestion{
			Name:      c.Name,
			ArgsJson:  string(c.Args),
			Peer:      &v1.Peer{Identity: identityToProto(c.Identity)},
			RequestId: c.ID,
		}}}
	}
	type result struct {
		v   json.RawMessage
		err error
	}
	done := make(chan result, 1)
	a := &ask{
		kind: v1.QuestionKind_QUESTION_KIND_CALL, name: c.Name, build: q,
		progress: func(p *v1.CallProgress) { progress(json.RawMessage(p.ProgressJson)) },
		answered: func(ans *v1.Answer) {
			v, err := callResult(ans)
			done <- result{v, err}
		},
		fellBack: func(fb fallback) {
			if fb == fbNone {
				done <- result{nil, requests.ErrMissing}
				return
			}
			done <- result{nil, errCallFailed}
		},
	}
	s.router.start(a)
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		s.router.cancel(a)
		return nil, ctx.Err()
	}
}

func callResult(a *v1.Answer) (json.RawMessage, error) {
	k, ok := a.Kind.(*v1.Answer_Call)
	if !ok || k.Call == nil {
		return nil, errCallFailed
	}
	switch o := k.Call.Outcome.(type) {
	case *v1.CallAnswer_ResultJson:
		if o.ResultJson == "" {
			return json.RawMessage("null"), nil
		}
		return json.RawMessage(o.ResultJson), nil
	case *v1.CallAnswer_Error:
		if o.Error == nil {
			return nil, errCallFailed
		}
		switch o.Error.Reason {
		case requests.ReasonRefused:
			ref := &admission.Refusal{}
			for _, r := range o.Error.Reasons {
				if r != nil && r.Code != "" {
					ref.Reasons = append(ref.Reasons, admission.Reason{Code: r.Code, Message: r.Message})
				}
			}
			return nil, ref
		case requests.ReasonMissing:
			return nil, requests.ErrMissing
		case requests.ReasonNotData:
			return nil, requests.ErrNotData
		}
	}
	return nil, errCallFailed
}
