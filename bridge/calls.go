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

// errCallFailed answers a peer "failed": the backend failed, or answered
// something that is not a call's answer.
var errCallFailed = errors.New("bridge: the call failed")

// callFallback is "failed" with the reason the backend could not answer.
func callFallback(fb fallback) error {
	if fb == fbBusy {
		return &requests.Failure{Message: "the call failed", Reasons: []admission.Reason{{Code: string(ReasonAuthorityBusy), Message: "the call's backend is busy"}}}
	}
	return &requests.Failure{Message: "the call failed", Reasons: []admission.Reason{{Code: string(ReasonAuthorityTimeout), Message: "the call's backend did not answer in time"}}}
}

// Call asks the call claimant of the name to answer a request-channel call
// (requests.Calls); progress answers reach the peer as they come. No
// claimant answers "missing".
func (s *Server) Call(ctx context.Context, c requests.Call, progress func(json.RawMessage)) (json.RawMessage, error) {
	q := func() *v1.Question {
		return &v1.Question{Kind: &v1.Question_Call{Call: &v1.CallQuestion{
			Name:      c.Name,
			ArgsJson:  string(c.Args),
			Peer:      peerToProto(c.Identity, c.RemoteAddr, c.Link),
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
			done <- result{nil, callFallback(fb)}
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
		case requests.ReasonFailed:
			// Written by the backend for the client, so it is passed on.
			f := &requests.Failure{Message: o.Error.Message}
			for _, r := range o.Error.Reasons {
				if r != nil && r.Code != "" {
					f.Reasons = append(f.Reasons, admission.Reason{Code: r.Code, Message: r.Message})
				}
			}
			return nil, f
		}
	}
	return nil, errCallFailed
}
