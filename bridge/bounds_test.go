package bridge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weftgate/weftgate/bridge"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/internal/protocodec"
)

// A request that only names things is bounded far below the message limit:
// a backend with the token cannot have the gateway decode a 1 MiB name.
func TestSmallRequestsAreBounded(t *testing.T) {
	e := startEnv(t, envOpts{})
	ctx := ctxT(t)
	_, err := e.client.GetState(ctx, &v1.GetStateRequest{Document: strings.Repeat("n", bridge.MaxSmallRequestBytes)})
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), protocodec.ErrTooLarge.Error()) {
		t.Fatalf("GetState of a %d-byte name: %v, want refused as too large", bridge.MaxSmallRequestBytes, err)
	}
	_, err = e.client.ListDocuments(ctx, &v1.ListDocumentsRequest{PageToken: strings.Repeat("p", 1<<20)})
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), protocodec.ErrTooLarge.Error()) {
		t.Fatalf("ListDocuments with a 1 MiB token: %v, want refused as too large", err)
	}
	// A name at the store's bound is the gateway's to judge, as before.
	if _, err := e.client.GetState(ctx, &v1.GetStateRequest{Document: strings.Repeat("n", 1024)}); status.Code(err) != codes.NotFound {
		t.Fatalf("GetState of a 1024-byte name: %v, want NotFound", err)
	}
}

// One connection has at most MaxConcurrentStreams calls open; the client
// queues the next until one ends.
func TestConcurrentStreamsPerConnectionAreBounded(t *testing.T) {
	e := startEnv(t, envOpts{bridge: bridge.Config{MaxConcurrentStreams: 2}})
	open := func(ctx context.Context) v1.GatewayService_SubscribeClient {
		s, err := e.client.Subscribe(ctx, &v1.SubscribeRequest{Target: &v1.SubscribeRequest_Document{Document: "d"}, Start: v1.StartPosition_START_POSITION_LIVE})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ctx1, end1 := context.WithCancel(ctxT(t))
	defer end1()
	open(ctx1)
	open(ctxT(t))
	// The server takes a connection's streams in order, so both are open
	// when a third arrives: it is queued (or refused and retried) until
	// its deadline.
	short, cancel := context.WithTimeout(ctxT(t), 500*time.Millisecond)
	_, err := e.client.ListDocuments(short, &v1.ListDocumentsRequest{})
	cancel()
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("a third call with two streams open: %v, want it queued until its deadline", err)
	}
	end1()
	if _, err := e.client.ListDocuments(ctxT(t), &v1.ListDocumentsRequest{}); err != nil {
		t.Fatalf("a call once a stream ended: %v", err)
	}
}
