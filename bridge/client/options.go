package client

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc"
)

// Bounds, named so a caller can see what it hit.
const (
	// DefaultMaxInFlight is how many questions a stream has its handlers
	// work on at once when Options.MaxInFlight is 0.
	DefaultMaxInFlight = 64
	// MaxMaxInFlight caps Options.MaxInFlight.
	MaxMaxInFlight = 4096
	// DefaultMaxMessageBytes bounds one gRPC message in either direction
	// when Options leaves it 0.
	DefaultMaxMessageBytes = 16 << 20
	// MaxBackendBytes bounds Options.Backend (Hello.backend).
	MaxBackendBytes = 128
	// MaxPatternBytes bounds a claim's pattern.
	MaxPatternBytes = 1024
	// MaxLabelBytes bounds a write's label and writer name.
	MaxLabelBytes = 128
	// MaxResumeDocuments bounds the documents one subscription resumes.
	MaxResumeDocuments = 10000
	// MaxAnswersPerMessage bounds the answers batched into one message.
	MaxAnswersPerMessage = 256
	// DefaultCloseTimeout bounds how long Close waits for the gateway to
	// acknowledge the authority stream's half-close.
	DefaultCloseTimeout = 5 * time.Second
	// WelcomeTimeout bounds the wait for the gateway's Welcome; past it the
	// attempt fails (ErrProtocol) and is retried with backoff.
	WelcomeTimeout = 30 * time.Second
	// DefaultBackend is Hello.backend when Options.Backend is empty.
	DefaultBackend = "weftgate-go"
)

// Options configure a Client. The zero value dials without TLS or token.
type Options struct {
	// Backend names this backend in the gateway's logs and in the origin
	// of its writes; DefaultBackend when empty.
	Backend string
	// Token is a bearer token sent with every call ("authorization:
	// Bearer <token>"). Without TLS it crosses the network in the clear;
	// use that only on a loopback or private link.
	Token string
	// TLS turns TLS on; nil dials in plaintext.
	TLS *tls.Config
	// MaxInFlight bounds the questions whose handlers run at once on one
	// stream (sent as Hello.max_in_flight; the gateway may lower it).
	// 0 is DefaultMaxInFlight; more than MaxMaxInFlight is refused.
	MaxInFlight int
	// MaxRecvMessageBytes and MaxSendMessageBytes bound one gRPC message;
	// 0 is DefaultMaxMessageBytes.
	MaxRecvMessageBytes int
	MaxSendMessageBytes int
	// CloseTimeout bounds Close's wait for the gateway; 0 is
	// DefaultCloseTimeout.
	CloseTimeout time.Duration
	// Backoff paces stream re-opens; nil is Exponential from
	// DefaultBackoffBase to DefaultBackoffMax with full jitter.
	Backoff Backoff
	// Clock times backoff waits; nil is the real clock.
	Clock Clock
	// Logger receives stream drops and handler failures; nil discards.
	Logger *slog.Logger
	// DialOptions are appended to the SDK's own (a custom dialer, say).
	DialOptions []grpc.DialOption
}

func (o Options) withDefaults() (Options, error) {
	if o.Backend == "" {
		o.Backend = DefaultBackend
	}
	if len(o.Backend) > MaxBackendBytes {
		return o, fmt.Errorf("client: Options.Backend is %d bytes, more than %d", len(o.Backend), MaxBackendBytes)
	}
	if strings.ContainsAny(o.Token, " \t\r\n") {
		return o, errors.New("client: Options.Token holds whitespace")
	}
	switch {
	case o.MaxInFlight == 0:
		o.MaxInFlight = DefaultMaxInFlight
	case o.MaxInFlight < 0 || o.MaxInFlight > MaxMaxInFlight:
		return o, fmt.Errorf("client: Options.MaxInFlight %d is outside 1..%d", o.MaxInFlight, MaxMaxInFlight)
	}
	if o.MaxRecvMessageBytes < 0 || o.MaxSendMessageBytes < 0 {
		return o, errors.New("client: negative message bound")
	}
	if o.MaxRecvMessageBytes == 0 {
		o.MaxRecvMessageBytes = DefaultMaxMessageBytes
	}
	if o.MaxSendMessageBytes == 0 {
		o.MaxSendMessageBytes = DefaultMaxMessageBytes
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = DefaultCloseTimeout
	}
	if o.Backoff == nil {
		o.Backoff = Exponential{Base: DefaultBackoffBase, Max: DefaultBackoffMax}
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}
