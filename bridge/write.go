package bridge

import (
	"context"
	"errors"
	"github.com/weftgate/weftgate/internal/pbconv"
	"strings"
	"sync"

	"github.com/weftgate/weftgate/gateway"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// writeSpec is one backend write, from a unary call or a stream.
type writeSpec struct {
	doc    string
	commit *v1.Commit        // a commit write
	state  *v1.DocumentState // or a state write
	expect *uint64
	create *v1.Root
	origin backendOrigin
}

// writeNote keeps what the bridge's own Judge saw of a backend write: the
// deltas' paths, and the reasons when it refused. gateway.Write reports a
// refusal only as an error string, so this is how the reasons, with their
// paths, reach the WriteResult.
type writeNote struct {
	paths   [][]string
	refused []frame.Reason
}

type notes struct {
	mu sync.Mutex
	m  map[string]*writeNote
}

func (n *notes) open(id string) *writeNote {
	w := &writeNote{}
	n.mu.Lock()
	n.m[id] = w
	n.mu.Unlock()
	return w
}

func (n *notes) close(id string) {
	n.mu.Lock()
	delete(n.m, id)
	n.mu.Unlock()
}

// record is called from Judge for backend origins.
func (n *notes) record(id string, paths [][]string, v gateway.Verdict) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if w := n.m[id]; w != nil {
		w.paths = paths
		if !v.Accepted() {
			w.refused = v.Reasons
		}
	}
}

func (n *notes) get(id string) (writeNote, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	w := n.m[id]
	if w == nil {
		return writeNote{}, false
	}
	return *w, true
}

// isLimit tells the refusals that are bounds (a well-formed write that is
// too big) from malformed input.
func isLimit(r protocol.Reason) bool {
	switch r {
	case protocol.CommitTooLarge, protocol.TooManyDeltas, protocol.TooManyObservables, protocol.TooManySlots:
		return true
	}
	return false
}

// write applies one backend write. bad is a malformed write (the unary
// calls answer INVALID_ARGUMENT); fatal is the gateway failing to take it
// at all (shutting down, the caller's deadline).
func (s *Server) write(ctx context.Context, w writeSpec) (res *v1.WriteResult, bad *protocol.Error, fatal error) {
	gw := s.gateway()
	if gw == nil {
		return nil, nil, errNotAttached
	}
	if !w.origin.fits() {
		return refusedResult(ReasonOriginTooLong, "the writer's name and label together are too long to store"), nil, nil
	}
	if w.commit != nil {
		return s.writeCommit(ctx, gw, w)
	}
	return s.writeState(ctx, gw, w)
}

func (s *Server) writeCommit(ctx context.Context, gw *gateway.Server, w writeSpec) (*v1.WriteResult, *protocol.Error, error) {
	c, b, err := commitFromProto(w.commit, s.cfg.CommitLimits)
	if err != nil {
		var pe *protocol.Error
		if errors.As(err, &pe) && isLimit(pe.Reason) {
			return &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_REFUSED, Reasons: reasonsToProto(reasonsOfErr(err))}, nil, nil
		}
		return nil, asProtocolError(err), nil
	}
	if w.create != nil {
		root, err := rootFromProto(w.create)
		if err != nil {
			return nil, asProtocolError(err), nil
		}
		if err := gw.Create(ctx, w.doc, root); err != nil {
			return s.writeFailed(ctx, err, nil)
		}
	}
	id := w.origin.id()
	s.notes.open(id)
	defer s.notes.close(id)
	s.activity(w.doc)
	cur, err := gw.Write(ctx, w.doc, w.origin.gateway(), b, w.expect)
	if err != nil {
		n, _ := s.notes.get(id)
		return s.writeFailed(ctx, err, n.refused)
	}
	n, _ := s.notes.get(id)
	return &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_APPLIED, Cursor: cur, Commit: pbconv.CommitTo(c, b, n.paths)}, nil, nil
}

// writeFailed turns a gateway error into a result, or a fatal error.
func (s *Server) writeFailed(ctx context.Context, err error, refused []frame.Reason) (*v1.WriteResult, *protocol.Error, error) {
	var cm *gateway.CursorMismatch
	switch {
	case errors.As(err, &cm):
		return &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_CURSOR_MISMATCH, Cursor: cm.Actual}, nil, nil
	case protocol.ReasonOf(err) == protocol.NoDocument:
		return &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_NO_DOCUMENT}, nil, nil
	case errors.Is(err, gateway.ErrClosed), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, err
	}
	rs := refused
	if len(rs) == 0 {
		rs = reasonsOfErr(err)
	}
	return &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_REFUSED, Reasons: reasonsToProto(rs)}, nil, nil
}

func (s *Server) writeState(ctx context.Context, gw *gateway.Server, w writeSpec) (*v1.WriteResult, *protocol.Error, error) {
	root, state, err := stateFromProto(w.state, s.cfg.CommitLimits)
	if err != nil {
		var pe *protocol.Error
		if errors.As(err, &pe) && isLimit(pe.Reason) {
			return &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_REFUSED, Reasons: reasonsToProto(reasonsOfErr(err))}, nil, nil
		}
		return nil, asProtocolError(err), nil
	}
	if err := gw.Create(ctx, w.doc, root); err != nil {
		return s.writeFailed(ctx, err, nil)
	}
	s.activity(w.doc)
	after, diff, err := gw.ReplaceState(ctx, w.doc, w.origin.gateway(), state, w.expect)
	if err != nil {
		return s.writeFailed(ctx, err, nil)
	}
	if diff == nil {
		return &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_UNCHANGED, Cursor: after}, nil, nil
	}
	c, b, err := commitFromProto(&v1.Commit{Encoded: diff}, s.cfg.CommitLimits)
	if err != nil {
		return &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_APPLIED, Cursor: after}, nil, nil
	}
	return &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_APPLIED, Cursor: after, Commit: pbconv.CommitTo(c, b, nil)}, nil, nil
}

func asProtocolError(err error) *protocol.Error {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return pe
	}
	return protocol.Errorf(protocol.InvalidCommit, err.Error())
}

// reasonsOfErr turns a gateway or protocol error into refusal reasons.
func reasonsOfErr(err error) []frame.Reason {
	var many *document.Refusal
	if errors.As(err, &many) && len(many.Reasons) > 0 {
		out := make([]frame.Reason, 0, len(many.Reasons))
		for _, e := range many.Reasons {
			out = append(out, frame.Reason{Code: string(e.Reason), Message: e.Message, Path: e.Path})
		}
		return out
	}
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return []frame.Reason{{Code: string(pe.Reason), Message: pe.Message, Path: pe.Path}}
	}
	// The gateway's own refusals (its authority timeout) are "code: message".
	if code, msg, ok := strings.Cut(err.Error(), ": "); ok && code != "" && !strings.ContainsAny(code, " \t") {
		return []frame.Reason{{Code: code, Message: msg}}
	}
	return []frame.Reason{{Code: string(ReasonInternal), Message: "the gateway could not apply the write"}}
}

// refusedFromErr is a malformed stream write's refusal.
func refusedFromErr(e *protocol.Error) *v1.WriteResult {
	return &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_REFUSED, Reasons: []*v1.Reason{{Code: string(e.Reason), Message: e.Message, Path: pbconv.PathTo(e.Path)}}}
}
