package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// answer runs the handler for q and builds its answer. Anything that goes
// wrong, the handler's error or panic or a question the SDK cannot read,
// is a Failure: the gateway then refuses rather than accepts.
func (s *session) answer(ctx context.Context, h Handlers, q *v1.Question) (ans *v1.Answer) {
	id := q.GetId()
	defer func() {
		if r := recover(); r != nil {
			s.a.c.opts.Logger.Error("weftgate handler panicked", "question", id, "panic", r)
			ans = failure(id, fmt.Sprintf("the handler panicked: %v", r))
		}
	}()
	asked := Asked{QuestionID: id, ClaimID: q.GetClaimId(), Attempt: q.GetAttempt(), Timeout: timeoutOf(q)}
	var a *v1.Answer
	var err error
	switch k := q.GetKind().(type) {
	case *v1.Question_Accept:
		a, err = s.accept(ctx, h, asked, k.Accept)
	case *v1.Question_Load:
		a, err = s.load(ctx, h, asked, k.Load)
	case *v1.Question_Identify:
		a, err = identify(ctx, h, asked, k.Identify)
	case *v1.Question_MayOpen:
		a, err = mayOpen(ctx, h, asked, k.MayOpen)
	case *v1.Question_Call:
		a, err = s.call(ctx, h, asked, k.Call)
	default:
		err = errors.New("a question of an unknown kind")
	}
	if err != nil {
		if ctx.Err() == nil {
			s.a.c.opts.Logger.Warn("weftgate handler failed", "question", id, "err", err)
		}
		return failure(id, err.Error())
	}
	a.QuestionId = id
	return a
}

var errNoHandler = errors.New("no handler for this kind of question on its claim")

func (s *session) accept(ctx context.Context, h Handlers, asked Asked, q *v1.AcceptQuestion) (*v1.Answer, error) {
	if h.Accept == nil {
		return nil, errNoHandler
	}
	view, err := viewFrom(q.GetCommit(), s.a.c.limits)
	if err != nil {
		return nil, fmt.Errorf("unreadable commit: %w", err)
	}
	reasons, err := h.Accept(ctx, AcceptQuestion{Asked: asked, Document: q.GetDocument(), Cursor: q.GetCursor(),
		Origin: originFrom(q.GetOrigin()), State: q.GetState(), CommitView: view})
	if err != nil {
		return nil, err
	}
	rs, err := reasonsTo(reasons)
	if err != nil {
		return nil, err
	}
	return &v1.Answer{Kind: &v1.Answer_Accept{Accept: &v1.AcceptAnswer{Accepted: len(rs) == 0, Reasons: rs}}}, nil
}

func (s *session) load(ctx context.Context, h Handlers, asked Asked, q *v1.LoadQuestion) (*v1.Answer, error) {
	if h.Load == nil {
		return nil, errNoHandler
	}
	got, err := h.Load(ctx, LoadQuestion{Asked: asked, Document: q.GetDocument(), Peer: optionalPeer(q.GetPeer())})
	if err != nil {
		return nil, err
	}
	la := &v1.LoadAnswer{}
	if got != nil {
		st, err := stateTo(got.State)
		if err != nil {
			return nil, fmt.Errorf("the loaded state does not encode: %w", err)
		}
		la.Found, la.State, la.Cursor = true, st, got.Cursor
	}
	return &v1.Answer{Kind: &v1.Answer_Load{Load: la}}, nil
}

func identify(ctx context.Context, h Handlers, asked Asked, q *v1.IdentifyQuestion) (*v1.Answer, error) {
	if h.Identify == nil {
		return nil, errNoHandler
	}
	who, reasons, err := h.Identify(ctx, IdentifyQuestion{Asked: asked, Handshake: handshakeFrom(q.GetHandshake())})
	if err != nil {
		return nil, err
	}
	rs, err := reasonsTo(reasons)
	if err != nil {
		return nil, err
	}
	ia := &v1.IdentifyAnswer{Admitted: len(rs) == 0, Reasons: rs}
	if ia.Admitted {
		ia.Identity = identityTo(who)
	}
	return &v1.Answer{Kind: &v1.Answer_Identify{Identify: ia}}, nil
}

func mayOpen(ctx context.Context, h Handlers, asked Asked, q *v1.MayOpenQuestion) (*v1.Answer, error) {
	if h.MayOpen == nil {
		return nil, errNoHandler
	}
	mq := MayOpenQuestion{Asked: asked, Document: q.GetDocument(), Peer: peerFrom(q.GetPeer()), Exists: q.GetExists(), Want: q.GetWant()}
	if q.GetRoot() != nil {
		r, err := rootFrom(q.GetRoot())
		if err != nil {
			return nil, fmt.Errorf("unreadable root: %w", err)
		}
		mq.Root = &r
	}
	reasons, err := h.MayOpen(ctx, mq)
	if err != nil {
		return nil, err
	}
	rs, err := reasonsTo(reasons)
	if err != nil {
		return nil, err
	}
	return &v1.Answer{Kind: &v1.Answer_MayOpen{MayOpen: &v1.MayOpenAnswer{Allowed: len(rs) == 0, Reasons: rs}}}, nil
}

// errCallDone is a progress sent after the call's handler returned.
var errCallDone = errors.New("client: the call has been answered")

func (s *session) call(ctx context.Context, h Handlers, asked Asked, q *v1.CallQuestion) (*v1.Answer, error) {
	if h.Call == nil {
		return nil, errNoHandler
	}
	var mu sync.Mutex
	done := false
	progress := func(v json.RawMessage) error {
		if !json.Valid(v) {
			return errors.New("client: progress is not JSON")
		}
		mu.Lock()
		defer mu.Unlock() // held while sending, so no progress follows the answer
		if done {
			return errCallDone
		}
		a := &v1.Answer{QuestionId: asked.QuestionID, Kind: &v1.Answer_CallProgress{CallProgress: &v1.CallProgress{ProgressJson: string(v)}}}
		if !s.pushCtx(ctx, a) {
			return context.Cause(ctx)
		}
		return nil
	}
	args := []byte(q.GetArgsJson())
	if len(args) == 0 {
		args = []byte("null")
	}
	result, err := h.Call(ctx, CallQuestion{Asked: asked, Name: q.GetName(), Args: args, Peer: peerFrom(q.GetPeer()), RequestID: q.GetRequestId()}, progress)
	mu.Lock()
	done = true
	mu.Unlock()
	if ce, ok := errors.AsType[*CallError](err); ok {
		if ce.Reason == "" {
			return nil, errors.New("a CallError with no reason")
		}
		rs, rerr := reasonsTo(ce.Reasons)
		if rerr != nil {
			return nil, rerr
		}
		return &v1.Answer{Kind: &v1.Answer_Call{Call: &v1.CallAnswer{Outcome: &v1.CallAnswer_Error{Error: &v1.CallError{
			Reason: ce.Reason, Message: ce.Message, Reasons: rs}}}}}, nil
	}
	if err != nil {
		return nil, err
	}
	if result == nil {
		result = json.RawMessage("null")
	}
	if !json.Valid(result) {
		return nil, errors.New("the call's result is not JSON")
	}
	return &v1.Answer{Kind: &v1.Answer_Call{Call: &v1.CallAnswer{Outcome: &v1.CallAnswer_ResultJson{ResultJson: string(result)}}}}, nil
}
