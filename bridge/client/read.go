package client

import (
	"context"
	"fmt"
	"iter"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// GetState returns a document's state and the cursor it is at, durable.
// A document nobody has is ErrNotFound.
func (c *Client) GetState(ctx context.Context, doc string) (State, uint64, error) {
	if err := c.open(); err != nil {
		return State{}, 0, err
	}
	resp, err := c.svc.GetState(ctx, &v1.GetStateRequest{Document: doc})
	if status.Code(err) == codes.NotFound {
		return State{}, 0, fmt.Errorf("%w: %q", ErrNotFound, doc)
	}
	if err != nil {
		return State{}, 0, fmt.Errorf("client: GetState %q: %w", doc, err)
	}
	st, _, err := stateFrom(resp.GetState(), c.limits)
	if err != nil {
		return State{}, 0, fmt.Errorf("client: GetState %q: unreadable state: %w", doc, err)
	}
	return st, resp.GetCursor(), nil
}

// DocumentInfo describes one document the gateway holds.
type DocumentInfo struct {
	Name            string
	Root            Root
	Cursor          uint64
	Loaded          bool
	LinkCount       int
	SubscriberCount int
	// Links are the linked peers, when ListOptions.IncludeLinks asked.
	Links []Peer
}

// ListOptions select documents to list.
type ListOptions struct {
	// Pattern selects names; nil lists every document.
	Pattern *Pattern
	// PageSize is the documents per call: 0 is the gateway's 100, at most
	// 1000.
	PageSize     int
	IncludeLinks bool
}

// ListDocuments yields the documents the gateway holds in name order,
// calling the gateway a page at a time as the loop asks for more. A failed
// call is yielded as an error and ends the sequence.
func (c *Client) ListDocuments(ctx context.Context, o ListOptions) iter.Seq2[DocumentInfo, error] {
	return func(yield func(DocumentInfo, error) bool) {
		if err := c.open(); err != nil {
			yield(DocumentInfo{}, err)
			return
		}
		req := &v1.ListDocumentsRequest{PageSize: uint32(max(0, o.PageSize)), IncludeLinks: o.IncludeLinks}
		if o.Pattern != nil {
			req.Pattern = patternTo(*o.Pattern)
		}
		for {
			resp, err := c.svc.ListDocuments(ctx, req)
			if err != nil {
				yield(DocumentInfo{}, fmt.Errorf("client: ListDocuments: %w", err))
				return
			}
			for _, d := range resp.GetDocuments() {
				info, err := infoFrom(d)
				if !yield(info, err) || err != nil {
					return
				}
			}
			if resp.GetNextPageToken() == "" {
				return
			}
			req.PageToken = resp.GetNextPageToken()
		}
	}
}

func infoFrom(d *v1.DocumentInfo) (DocumentInfo, error) {
	r, err := rootFrom(d.GetRoot())
	if err != nil {
		return DocumentInfo{}, fmt.Errorf("client: document %q: unreadable root: %w", d.GetName(), err)
	}
	info := DocumentInfo{Name: d.GetName(), Root: r, Cursor: d.GetCursor(), Loaded: d.GetLoaded(),
		LinkCount: int(d.GetLinkCount()), SubscriberCount: int(d.GetSubscriberCount())}
	for _, p := range d.GetLinks() {
		info.Links = append(info.Links, peerFrom(p))
	}
	return info, nil
}
