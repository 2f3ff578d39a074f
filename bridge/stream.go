package bridge

import (
	"context"
	"errors"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// stream is one authority stream: a receiver goroutine reading the
// backend's messages, one sender goroutine writing the outbox (grpc-go
// allows one SendMsg at a time), and the handler goroutine that waits for
// either to end the stream.
type stream struct {
	id      uint64
	backend string
	max     int // in-flight questions

	// Guarded by router.mu.
	claims   map[uint64]*claim
	asks     map[uint64]*ask
	held     []*ask
	inflight int
	nextQID  uint64
	gone     bool

	out *outbox

	ctx    context.Context
	cancel context.CancelFunc

	killOnce sync.Once
	killed   chan struct{}
	killErr  error

	writes writer
}

func (st *stream) kill(err error) {
	st.killOnce.Do(func() {
		st.killErr = err
		close(st.killed)
	})
}

type authorityStream = grpc.BidiStreamingServer[v1.AuthorityRequest, v1.AuthorityResponse]

// Authority serves one backend's authority stream.
func (s *Server) Authority(srv authorityStream) error {
	if s.closing.Load() {
		return status.Error(codes.Unavailable, "the gateway is shutting down")
	}
	first, err := srv.Recv()
	if err != nil {
		return err
	}
	hello := first.GetHello()
	if hello == nil {
		return status.Error(codes.InvalidArgument, "the first message is Hello")
	}
	if n := len(hello.Backend); n == 0 || n > MaxBackendBytes {
		return status.Error(codes.InvalidArgument, "Hello.backend is 1 to 128 bytes")
	}
	maxIn := s.cfg.InFlightPerStream
	if hello.MaxInFlight > 0 {
		maxIn = min(int(hello.MaxInFlight), s.cfg.MaxInFlightPerStream)
	}
	st := &stream{
		id:      s.streamIDs.Add(1),
		backend: hello.Backend,
		max:     maxIn,
		claims:  map[uint64]*claim{},
		asks:    map[uint64]*ask{},
		killed:  make(chan struct{}),
	}
	st.ctx, st.cancel = context.WithCancel(srv.Context())
	defer st.cancel()
	st.out = newOutbox(s.cfg.MaxSendQueue, DefaultMaxBatchQuestions, s.cfg.MaxSendMessageBytes/2, func() {
		st.kill(status.Error(codes.ResourceExhausted, "the backend does not read its stream"))
	})
	st.writes = writer{s: s, st: st, queues: map[string]*docWrites{}, ids: map[uint64]struct{}{}}
	if !s.router.addStream(st) {
		return status.Error(codes.Unavailable, "the gateway is shutting down")
	}
	s.router.stats.StreamsOpen.Add(1)
	defer s.router.stats.StreamsOpen.Add(-1)
	st.out.push(&v1.AuthorityResponse{Message: &v1.AuthorityResponse_Welcome{Welcome: &v1.Welcome{StreamId: st.id, Node: s.cfg.Node, Limits: s.router.limits(st)}}})
	s.log.Info("authority stream", "stream", st.id, "backend", st.backend, "max_in_flight", st.max)

	sent := make(chan struct{})
	s.track(func() {
		defer close(sent)
		s.sendLoop(st, srv)
	})
	received := make(chan error, 1)
	s.track(func() { received <- s.receive(st, srv) })

	var end error
	graceful := false
	select {
	case end = <-received:
		graceful = end == nil
	case <-st.killed:
		end = st.killErr
	}
	// Claims end at once; unanswered questions move on.
	s.router.streamGone(st)
	s.router.publishClaims()
	if !graceful {
		st.cancel()
	}
	st.writes.stop()
	st.out.close()
	<-sent
	if graceful {
		select {
		case <-st.killed:
			end = st.killErr
		default:
		}
	}
	s.log.Info("authority stream ended", "stream", st.id, "backend", st.backend, "err", end)
	return end
}

func (s *Server) sendLoop(st *stream, srv authorityStream) {
	for {
		items, closed := st.out.take()
		if closed {
			return
		}
		if len(items) == 0 {
			select {
			case <-st.out.wake:
				continue
			case <-st.ctx.Done():
				return
			}
		}
		for _, m := range items {
			if err := srv.Send(m); err != nil {
				st.kill(err)
				st.cancel()
				return
			}
		}
	}
}

// receive reads the backend's messages until it half-closes (nil), the
// stream fails, or a message breaks the rules (INVALID_ARGUMENT).
func (s *Server) receive(st *stream, srv authorityStream) error {
	for {
		m, err := srv.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch x := m.Message.(type) {
		case *v1.AuthorityRequest_Claim:
			res := s.router.claim(st, x.Claim)
			if res.Granted {
				s.router.publishClaims()
			}
			st.out.push(&v1.AuthorityResponse{Message: &v1.AuthorityResponse_ClaimResult{ClaimResult: res}})
		case *v1.AuthorityRequest_Release:
			var id uint64
			if x.Release != nil {
				id = x.Release.ClaimId
			}
			s.router.release(st, id)
			s.router.publishClaims()
			st.out.push(&v1.AuthorityResponse{Message: &v1.AuthorityResponse_Released{Released: &v1.Released{ClaimId: id}}})
		case *v1.AuthorityRequest_Answers:
			if x.Answers == nil {
				continue
			}
			for _, a := range x.Answers.Answers {
				s.router.answer(st, a)
			}
		case *v1.AuthorityRequest_Write:
			st.writes.submit(x.Write)
		case *v1.AuthorityRequest_Hello:
			return status.Error(codes.InvalidArgument, "Hello comes once, first")
		default:
			return status.Error(codes.InvalidArgument, "an AuthorityRequest sets exactly one message")
		}
	}
}
