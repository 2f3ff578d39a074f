package client

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Deleted says what a DeleteDocument ended.
type Deleted struct {
	LinksEnded       int
	SubscribersEnded int
}

// DeleteDocument removes a document for good (data that must go): every
// link's topic on it ends with the fault deleted, its subscriptions end,
// and the store forgets every record and snapshot of it. A later open of
// the name starts a new document. A document nobody has is ErrNotFound.
// A backend that loads documents from its own store must delete its copy
// too, or it hands the document back at the next open.
func (c *Client) DeleteDocument(ctx context.Context, doc string) (Deleted, error) {
	if err := c.open(); err != nil {
		return Deleted{}, err
	}
	resp, err := c.svc.DeleteDocument(ctx, &v1.DeleteDocumentRequest{Document: doc})
	if status.Code(err) == codes.NotFound {
		return Deleted{}, fmt.Errorf("%w: %q", ErrNotFound, doc)
	}
	if err != nil {
		return Deleted{}, fmt.Errorf("client: DeleteDocument %q: %w", doc, err)
	}
	return Deleted{LinksEnded: int(resp.GetLinksEnded()), SubscribersEnded: int(resp.GetSubscribersEnded())}, nil
}

// EndLink ends one link, by the id /status shows for it ("c7" or 7), with
// reason (a short token the client's fault handler sees) and a message.
// It reports how many links it ended: 0 when none has that id.
func (c *Client) EndLink(ctx context.Context, id, reason, message string) (int, error) {
	n, err := strconv.ParseUint(strings.TrimPrefix(id, "c"), 10, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("client: EndLink: %q is not a link id (c1, c2, ... as /status shows)", id)
	}
	return c.endLinks(ctx, &v1.EndLinksRequest{Target: &v1.EndLinksRequest_ConnectionId{ConnectionId: n}, Reason: reason, Message: message})
}

// EndDocumentLinks ends the topic on doc of every link that has it open,
// with reason and message; the links themselves carry on. It reports how
// many topics it ended.
func (c *Client) EndDocumentLinks(ctx context.Context, doc, reason, message string) (int, error) {
	return c.endLinks(ctx, &v1.EndLinksRequest{Target: &v1.EndLinksRequest_Document{Document: doc}, Reason: reason, Message: message})
}

func (c *Client) endLinks(ctx context.Context, req *v1.EndLinksRequest) (int, error) {
	if err := c.open(); err != nil {
		return 0, err
	}
	resp, err := c.svc.EndLinks(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("client: EndLinks: %w", err)
	}
	return int(resp.GetEnded()), nil
}
