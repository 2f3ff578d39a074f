package bridge

import (
	"context"
	"encoding/base64"
	"errors"
	"sort"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weftgate/weftgate/gateway"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/frame"
)

// statusOf maps a gateway error on a call to its gRPC status.
func statusOf(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, errNotAttached):
		return status.Error(codes.Unavailable, "the bridge has no gateway")
	case errors.Is(err, gateway.ErrClosed):
		return status.Error(codes.Unavailable, "the gateway is shutting down")
	case protocol.ReasonOf(err) == protocol.NoDocument:
		return status.Error(codes.NotFound, "no such document")
	case protocol.ReasonOf(err) == gateway.ReasonDeleted:
		// An operator deleted the document under the call or stream.
		return status.Error(codes.Aborted, err.Error())
	case protocol.ReasonOf(err) == gateway.ReasonBadName:
		return status.Error(codes.InvalidArgument, err.Error())
	case retryable(protocol.ReasonOf(err)):
		return status.Error(codes.Unavailable, err.Error())
	case ctx.Err() != nil:
		return status.FromContextError(ctx.Err()).Err()
	}
	return status.Error(codes.Internal, "the gateway could not answer")
}

// retryable reasons are a backend or the store failing for now (a load
// among them), or the gateway holding as many documents as it may:
// UNAVAILABLE, so a caller retries.
func retryable(r protocol.Reason) bool {
	return r == gateway.ReasonStoreUnavailable || r == ReasonAuthorityTimeout || r == ReasonAuthorityBusy ||
		r == gateway.ReasonTooManyDocuments
}

// invalid is INVALID_ARGUMENT with the aweft reason leading the message.
func invalid(e *protocol.Error) error {
	return status.Error(codes.InvalidArgument, e.Error())
}

func checkName(name string) error {
	if name == "" || len(name) > MaxPatternBytes {
		return status.Error(codes.InvalidArgument, "a document name is 1 to 1024 bytes")
	}
	return nil
}

// GetState returns a document's durable state and cursor.
func (s *Server) GetState(ctx context.Context, req *v1.GetStateRequest) (*v1.GetStateResponse, error) {
	if err := checkName(req.Document); err != nil {
		return nil, err
	}
	gw := s.gateway()
	if gw == nil {
		return nil, statusOf(ctx, errNotAttached)
	}
	root, state, cur, err := gw.State(ctx, req.Document)
	if err != nil {
		return nil, statusOf(ctx, err)
	}
	st, err := stateToProto(root, state)
	if err != nil {
		return nil, status.Error(codes.Internal, "the document's state does not decode")
	}
	return &v1.GetStateResponse{State: st, Cursor: cur}, nil
}

func (s *Server) unaryOrigin(writer, label string) (backendOrigin, error) {
	if len(writer) > MaxBackendBytes || len(label) > MaxLabelBytes {
		return backendOrigin{}, status.Error(codes.InvalidArgument, "writer and label are at most 128 bytes each")
	}
	return backendOrigin{name: writer, write: s.writeIDs.Add(1), label: label}, nil
}

// WriteCommit applies one commit, optionally compare-and-swap.
func (s *Server) WriteCommit(ctx context.Context, req *v1.WriteCommitRequest) (*v1.WriteCommitResponse, error) {
	if err := checkName(req.Document); err != nil {
		return nil, err
	}
	if req.Commit == nil {
		return nil, status.Error(codes.InvalidArgument, "a commit is required")
	}
	o, err := s.unaryOrigin(req.Writer, req.Label)
	if err != nil {
		return nil, err
	}
	res, bad, fatal := s.write(ctx, writeSpec{doc: req.Document, commit: req.Commit, expect: req.ExpectedCursor, create: req.CreateRoot, origin: o})
	switch {
	case bad != nil:
		return nil, invalid(bad)
	case fatal != nil:
		return nil, statusOf(ctx, fatal)
	}
	return &v1.WriteCommitResponse{Result: res}, nil
}

// ReplaceState moves a document to a whole state in place.
func (s *Server) ReplaceState(ctx context.Context, req *v1.ReplaceStateRequest) (*v1.ReplaceStateResponse, error) {
	if err := checkName(req.Document); err != nil {
		return nil, err
	}
	if req.State == nil {
		return nil, status.Error(codes.InvalidArgument, "a state is required")
	}
	o, err := s.unaryOrigin(req.Writer, req.Label)
	if err != nil {
		return nil, err
	}
	res, bad, fatal := s.write(ctx, writeSpec{doc: req.Document, state: req.State, expect: req.ExpectedCursor, origin: o})
	switch {
	case bad != nil:
		return nil, invalid(bad)
	case fatal != nil:
		return nil, statusOf(ctx, fatal)
	}
	return &v1.ReplaceStateResponse{Result: res}, nil
}

// ListDocuments lists documents by name, a page at a time.
func (s *Server) ListDocuments(ctx context.Context, req *v1.ListDocumentsRequest) (*v1.ListDocumentsResponse, error) {
	gw := s.gateway()
	if gw == nil {
		return nil, statusOf(ctx, errNotAttached)
	}
	var pat *pattern
	if req.Pattern != nil {
		p, ok := patternFromProto(req.Pattern)
		if !ok {
			return nil, status.Error(codes.InvalidArgument, "a pattern sets exact or prefix, at most 1024 bytes")
		}
		pat = &p
	}
	after := ""
	if req.PageToken != "" {
		b, err := base64.RawURLEncoding.DecodeString(req.PageToken)
		if err != nil {
			return nil, status.Error(codes.InvalidArgument, "page_token is not one this gateway gave")
		}
		after = string(b)
	}
	size := int(req.PageSize)
	if size == 0 {
		size = DefaultPageSize
	}
	size = min(size, MaxPageSize)

	byName := map[string]*v1.DocumentInfo{}
	for _, d := range gw.Documents(ctx) {
		info := &v1.DocumentInfo{Name: d.Name, Root: rootToProto(d.Root), Cursor: d.Durable, Loaded: true, LinkCount: uint32(d.Links), SubscriberCount: uint32(d.Subscribers)}
		if req.IncludeLinks {
			for _, p := range d.Peers {
				n, _ := connectionID(p.ID)
				pp := &v1.Peer{Identity: &v1.Identity{}, RemoteAddr: p.Remote, ConnectionId: n}
				setIdentity(pp.Identity, p.Identity)
				info.Links = append(info.Links, pp)
			}
		}
		byName[d.Name] = info
	}
	if s.cfg.Store != nil {
		stored, err := s.cfg.Store.Documents(ctx)
		if err != nil {
			return nil, status.Error(codes.Unavailable, "the store could not list documents")
		}
		for _, d := range stored {
			if byName[d.Name] == nil {
				byName[d.Name] = &v1.DocumentInfo{Name: d.Name, Root: rootToProto(frame.Root{ID: d.Root, Kind: kindOf(d.RootKind)}), Cursor: d.Last}
			}
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		if n > after && (pat == nil || pat.match(n)) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	resp := &v1.ListDocumentsResponse{}
	if len(names) > size {
		names = names[:size]
		resp.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(names[size-1]))
	}
	for _, n := range names {
		resp.Documents = append(resp.Documents, byName[n])
	}
	return resp, nil
}
