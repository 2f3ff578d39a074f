package bridge

import (
	"context"
	"errors"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weftgate/weftgate/gateway"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol"
)

// The operator's calls. They pass the same token check as every call (the
// tap in grpc.go); the gateway logs each at INFO.

// DeleteDocument removes a document for good.
func (s *Server) DeleteDocument(ctx context.Context, req *v1.DeleteDocumentRequest) (*v1.DeleteDocumentResponse, error) {
	if err := checkName(req.Document); err != nil {
		return nil, err
	}
	gw := s.gateway()
	if gw == nil {
		return nil, statusOf(ctx, errNotAttached)
	}
	d, err := gw.DeleteDocument(ctx, req.Document)
	if err != nil {
		return nil, statusOf(ctx, err)
	}
	return &v1.DeleteDocumentResponse{LinksEnded: uint32(d.Links), SubscribersEnded: uint32(d.Subscribers)}, nil
}

// EndLinks ends one link, or every link's topic on a document.
func (s *Server) EndLinks(ctx context.Context, req *v1.EndLinksRequest) (*v1.EndLinksResponse, error) {
	gw := s.gateway()
	if gw == nil {
		return nil, statusOf(ctx, errNotAttached)
	}
	reason := protocol.Reason(req.Reason)
	var n int
	var err error
	switch t := req.Target.(type) {
	case *v1.EndLinksRequest_ConnectionId:
		err = gw.EndLink("c"+strconv.FormatUint(t.ConnectionId, 10), reason, req.Message)
		if err == nil {
			n = 1
		}
	case *v1.EndLinksRequest_Document:
		if err := checkName(t.Document); err != nil {
			return nil, err
		}
		n, err = gw.EndDocumentLinks(ctx, t.Document, reason, req.Message)
	default:
		return nil, status.Error(codes.InvalidArgument, "set connection_id or document")
	}
	switch {
	case errors.Is(err, gateway.ErrBadReason):
		return nil, status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, gateway.ErrNoLink):
		return nil, status.Error(codes.NotFound, "no open link has that connection_id")
	case err != nil:
		return nil, statusOf(ctx, err)
	}
	return &v1.EndLinksResponse{Ended: uint32(n)}, nil
}
