package client

import (
	"context"
	"fmt"
	"sync"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/internal/protocodec"
	"github.com/weftgate/weftgate/protocol/commit"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Client is one backend's connection to a gateway. Its methods are safe for
// concurrent use.
type Client struct {
	opts   Options
	cc     *grpc.ClientConn
	svc    v1.GatewayServiceClient
	limits commit.Limits // what a commit from the gateway may be: its message bound

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the client started, and every Subscribe

	mu     sync.Mutex
	closed bool
	done   chan struct{} // closed when Close has finished

	auth *authority
	subs subscriptions
}

// Dial connects to the gateway's gRPC address and waits until the
// connection is ready or ctx ends. A gateway that is not up yet is retried
// (by gRPC) until then; with no deadline on ctx, Dial waits for it.
func Dial(ctx context.Context, target string, opts Options) (*Client, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if o.TLS != nil {
		creds = credentials.NewTLS(o.TLS)
	}
	dial := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(protocodec.Codec{}), grpc.MaxCallRecvMsgSize(o.MaxRecvMessageBytes), grpc.MaxCallSendMsgSize(o.MaxSendMessageBytes)),
	}
	if o.Token != "" {
		dial = append(dial, grpc.WithPerRPCCredentials(bearer{token: o.Token, secure: o.TLS != nil}))
	}
	cc, err := grpc.NewClient(target, append(dial, o.DialOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if err := waitReady(ctx, cc); err != nil {
		cc.Close()
		return nil, fmt.Errorf("client: %s is not ready: %w", target, err)
	}
	c := &Client{
		opts:   o,
		cc:     cc,
		svc:    v1.NewGatewayServiceClient(cc),
		limits: commit.Limits{MaxCommitBytes: o.MaxRecvMessageBytes, MaxDeltas: o.MaxRecvMessageBytes},
		done:   make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.auth = newAuthority(c)
	c.subs.m = map[uint64]*subscription{}
	return c, nil
}

func waitReady(ctx context.Context, cc *grpc.ClientConn) error {
	cc.Connect()
	for {
		s := cc.GetState()
		if s == connectivity.Ready {
			return nil
		}
		if !cc.WaitForStateChange(ctx, s) {
			return ctx.Err()
		}
	}
}

// track counts one more goroutine (or Subscribe call) for Close to wait
// for; it refuses once Close has begun.
func (c *Client) track() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	return true
}

// Close half-closes the authority stream (the gateway moves the claims on
// at once and still acknowledges writes already sent), waits up to
// Options.CloseTimeout for the gateway to end it, then stops every stream,
// handler and Subscribe and waits for them. Handlers see their contexts
// cancelled; their answers are not sent.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		<-c.done
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.auth.shutdown()
	c.cancel()
	c.wg.Wait()
	err := c.cc.Close()
	close(c.done)
	return err
}

// bearer sends the token with every call. Requiring TLS is gRPC's default
// for credentials; a plaintext dial asked for the token anyway.
type bearer struct {
	token  string
	secure bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

func (b bearer) RequireTransportSecurity() bool { return b.secure }
