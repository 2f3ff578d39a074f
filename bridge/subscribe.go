package bridge

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/store"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/internal/pbconv"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// subscribeQueue bounds events waiting for the stream's one sender. A
// follower that finds it full waits, and so stops reading the store: a
// slow subscriber holds no more memory than this, and lags rather than
// losing events (past retention it gets a snapshot when it catches up).
const subscribeQueue = 256

// subscription is one Subscribe stream: one follower goroutine per
// document, each reading that document's log through gateway.Subscribe,
// and the handler goroutine alone sending.
type subscription struct {
	s      *Server
	gw     *gateway.Server
	ctx    context.Context
	cancel context.CancelFunc
	out    chan *v1.SubscribeResponse
	wake   chan struct{}
	resume map[string]uint64
	start  v1.StartPosition

	mu sync.Mutex
	// followed holds the documents with a follower; the value is whether
	// the document was noticed again meanwhile, so a follower that finds
	// its document absent hands it back rather than losing the notice.
	followed map[string]bool
	pending  map[string]struct{}
	err      error

	wg      sync.WaitGroup
	backlog atomic.Int64          // initial followers not caught up, plus one guard
	direct  *v1.SubscribeResponse // a CaughtUp for the handler to send; its goroutine only
	// caughtAt is how many events were queued when the last follower caught
	// up before the handler's guard counted itself: they go before direct.
	caughtAt    atomic.Int64
	directAfter int // the handler's goroutine only
}

type followMode uint8

const (
	modeInitial    followMode = iota // present when the subscription began
	modeDiscovered                   // appeared after: from its first commit
)

// Subscribe follows one document or a pattern of them.
func (s *Server) Subscribe(req *v1.SubscribeRequest, srv grpc.ServerStreamingServer[v1.SubscribeResponse]) error {
	gw := s.gateway()
	if gw == nil {
		return statusOf(srv.Context(), errNotAttached)
	}
	var pat pattern
	switch t := req.Target.(type) {
	case *v1.SubscribeRequest_Document:
		if err := checkName(t.Document); err != nil {
			return err
		}
		pat = pattern{exact: true, text: t.Document}
	case *v1.SubscribeRequest_Pattern:
		p, ok := patternFromProto(t.Pattern)
		if !ok {
			return status.Error(codes.InvalidArgument, "a pattern sets exact or prefix, at most 1024 bytes")
		}
		pat = p
	default:
		return status.Error(codes.InvalidArgument, "set document or pattern")
	}
	if len(req.Resume) > MaxResumeEntries {
		return status.Error(codes.InvalidArgument, "resume has at most 10000 entries")
	}
	ctx, cancel := context.WithCancel(srv.Context())
	defer cancel()
	sub := &subscription{
		s: s, gw: gw, ctx: ctx, cancel: cancel,
		out:      make(chan *v1.SubscribeResponse, subscribeQueue),
		wake:     make(chan struct{}, 1),
		resume:   req.Resume,
		start:    req.Start,
		followed: map[string]bool{},
		pending:  map[string]struct{}{},
	}
	// Watch before listing, so no document that appears meanwhile is missed.
	remove, ok := s.subs.add(&watch{pat: pat, notice: sub.notice, cancel: cancel})
	if !ok {
		return status.Error(codes.Unavailable, "the gateway is shutting down")
	}
	defer remove()
	s.stats.SubscribersNow.Add(1)
	defer s.stats.SubscribersNow.Add(-1)

	initial, err := s.initialNames(ctx, gw, pat, req.Resume)
	if err != nil {
		return err
	}
	if len(initial) > s.cfg.MaxPatternDocuments {
		return status.Error(codes.ResourceExhausted, "too-many-documents: the pattern matches more documents than one subscription may follow")
	}
	sub.backlog.Store(int64(len(initial)) + 1)
	for _, n := range initial {
		sub.follow(n, modeInitial)
	}
	end := sub.serve(srv)
	cancel()
	sub.wg.Wait()
	return end
}

// initialNames are the documents a subscription starts with.
func (s *Server) initialNames(ctx context.Context, gw *gateway.Server, pat pattern, resume map[string]uint64) ([]string, error) {
	if pat.exact {
		return []string{pat.text}, nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if !seen[n] && pat.match(n) {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, d := range gw.Documents(ctx) {
		add(d.Name)
	}
	if s.cfg.Store != nil {
		ds, err := s.cfg.Store.Documents(ctx)
		if err != nil {
			return nil, status.Error(codes.Unavailable, "the store could not list documents")
		}
		for _, d := range ds {
			add(d.Name)
		}
	}
	for n := range resume {
		add(n)
	}
	return out, nil
}

// serve sends events until the stream or a follower fails.
func (sub *subscription) serve(srv grpc.ServerStreamingServer[v1.SubscribeResponse]) error {
	sub.caughtUp(true)
	for {
		if ev := sub.direct; ev != nil {
			for ; sub.directAfter > 0; sub.directAfter-- {
				if err := srv.Send(<-sub.out); err != nil {
					return err
				}
			}
			sub.direct = nil
			if err := srv.Send(ev); err != nil {
				return err
			}
		}
		select {
		case ev := <-sub.out:
			if err := srv.Send(ev); err != nil {
				return err
			}
		case <-sub.wake:
			sub.discover()
		case <-sub.ctx.Done():
			sub.mu.Lock()
			err := sub.err
			sub.mu.Unlock()
			if err != nil {
				return err
			}
			return statusOf(sub.ctx, sub.ctx.Err())
		}
	}
}

// notice is a watch callback: it never blocks.
func (sub *subscription) notice(name string) {
	sub.mu.Lock()
	if _, ok := sub.followed[name]; ok {
		sub.followed[name] = true
	} else {
		sub.pending[name] = struct{}{}
	}
	sub.mu.Unlock()
	sub.poke()
}

func (sub *subscription) poke() {
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

// unfollow ends name's follower because the document is not there; a
// notice that came meanwhile starts another.
func (sub *subscription) unfollow(name string) {
	sub.mu.Lock()
	again := sub.followed[name]
	delete(sub.followed, name)
	if again {
		sub.pending[name] = struct{}{}
	}
	sub.mu.Unlock()
	if again {
		sub.poke()
	}
}

func (sub *subscription) discover() {
	sub.mu.Lock()
	names := make([]string, 0, len(sub.pending))
	for n := range sub.pending {
		names = append(names, n)
	}
	clear(sub.pending)
	sub.mu.Unlock()
	for _, n := range names {
		sub.follow(n, modeDiscovered)
	}
}

func (sub *subscription) fail(err error) {
	sub.mu.Lock()
	if sub.err == nil {
		sub.err = err
	}
	sub.mu.Unlock()
	sub.cancel()
}

// follow starts a follower for name unless one runs.
func (sub *subscription) follow(name string, mode followMode) {
	sub.mu.Lock()
	if _, ok := sub.followed[name]; ok {
		sub.mu.Unlock()
		return
	}
	if len(sub.followed) >= sub.s.cfg.MaxPatternDocuments {
		sub.mu.Unlock()
		sub.fail(status.Error(codes.ResourceExhausted, "too-many-documents: the subscription follows as many documents as it may"))
		return
	}
	sub.followed[name] = false
	sub.mu.Unlock()
	sub.wg.Add(1)
	go func() {
		defer sub.wg.Done()
		sub.run(name, mode)
	}()
}

// emit queues one event; false once the subscription is ending.
func (sub *subscription) emit(ev *v1.SubscribeResponse) bool {
	select {
	case sub.out <- ev:
		return true
	case <-sub.ctx.Done():
		return false
	}
}

// caughtUp counts one initial follower (or the guard, direct) through its
// backlog; the last one sends CaughtUp.
func (sub *subscription) caughtUp(direct bool) {
	queued := len(sub.out) // before counting: what follows is live
	left := sub.backlog.Add(-1)
	if !direct && left == 1 {
		// Perhaps the last follower, with the guard still to come.
		sub.caughtAt.Store(int64(queued))
	}
	if left != 0 {
		return
	}
	ev := &v1.SubscribeResponse{Event: &v1.SubscribeResponse_CaughtUp{CaughtUp: &v1.CaughtUp{}}}
	if direct {
		// Every follower caught up before the guard: what was queued by
		// then is their catch-up and reaches the stream first.
		sub.direct, sub.directAfter = ev, int(sub.caughtAt.Load())
		return
	}
	sub.emit(ev)
}

func snapshotEvent(name string, cursor uint64, root frame.Root, state []byte, why v1.SnapshotReason) (*v1.SubscribeResponse, error) {
	st, err := stateToProto(root, state)
	if err != nil {
		return nil, err
	}
	return &v1.SubscribeResponse{Event: &v1.SubscribeResponse_Snapshot{Snapshot: &v1.SnapshotEvent{Document: name, Cursor: cursor, State: st, Reason: why}}}, nil
}

// replicaOf builds the document at a state, for the deltas' paths.
func replicaOf(root frame.Root, state []byte) *document.Document {
	d := document.New(root.ID, root.Kind, document.Limits{})
	if len(state) == 0 {
		return d
	}
	c, err := commit.Decode(state)
	if err == nil {
		_, err = d.Reconcile(c)
	}
	if err != nil {
		return nil
	}
	return d
}

func absent(err error) bool {
	return protocol.ReasonOf(err) == protocol.NoDocument || errors.Is(err, store.ErrUnknownDocument)
}

// run follows one document until the subscription ends.
func (sub *subscription) run(name string, mode followMode) {
	initial := mode == modeInitial
	caught := false
	markCaught := func() {
		if initial && !caught {
			caught = true
			sub.caughtUp(false)
		}
	}
	defer markCaught()
	root, state, cur, err := sub.gw.State(sub.ctx, name)
	if absent(err) {
		// Not there yet: the next sign of it starts a new follower.
		sub.unfollow(name)
		return
	}
	if err != nil {
		sub.fail(statusOf(sub.ctx, err))
		return
	}
	var replica *document.Document
	var after uint64
	resume, resumed := sub.resume[name]
	snapshot := func(why v1.SnapshotReason) bool {
		ev, err := snapshotEvent(name, cur, root, state, why)
		if err != nil {
			sub.fail(status.Error(codes.Internal, "a document state does not decode"))
			return false
		}
		return sub.emit(ev)
	}
	switch {
	case !initial:
		after, replica = 0, replicaOf(root, nil)
	case resumed && resume > cur:
		if !snapshot(v1.SnapshotReason_SNAPSHOT_REASON_AHEAD) {
			return
		}
		after, replica = cur, replicaOf(root, state)
	case resumed:
		after = resume
		switch resume {
		case 0:
			replica = replicaOf(root, nil)
		case cur:
			replica = replicaOf(root, state)
		}
	case sub.start == v1.StartPosition_START_POSITION_SNAPSHOT:
		if !snapshot(v1.SnapshotReason_SNAPSHOT_REASON_REQUESTED) {
			return
		}
		after, replica = cur, replicaOf(root, state)
	default:
		after, replica = cur, replicaOf(root, state)
	}
	target := cur
	if after >= target {
		markCaught()
	}
	err = sub.gw.Subscribe(sub.ctx, name, after, func(ev gateway.Event) error {
		var out *v1.SubscribeResponse
		if ev.Snapshot {
			var err error
			if out, err = snapshotEvent(name, ev.Cursor, ev.Root, ev.State, v1.SnapshotReason_SNAPSHOT_REASON_EXPIRED); err != nil {
				return status.Error(codes.Internal, "a document state does not decode")
			}
			replica = replicaOf(ev.Root, ev.State)
		} else {
			c, err := commit.Decode(ev.Commit)
			if err != nil {
				return status.Error(codes.Internal, "a stored commit does not decode")
			}
			// Paths from the tail are those computed once at apply, the
			// ones the authority was shown; the replica answers for commits
			// read back from the store, and follows every commit for them.
			paths := ev.Paths
			if replica != nil {
				if paths == nil {
					paths = replica.Paths(c)
				}
				if err := replica.Update(c); err != nil {
					replica = nil
				}
			}
			out = &v1.SubscribeResponse{Event: &v1.SubscribeResponse_Commit{Commit: &v1.CommitEvent{
				Document: name, Cursor: ev.Cursor, Origin: storedOriginToProto(ev.Origin), Commit: pbconv.CommitTo(c, ev.Commit, paths),
			}}}
		}
		if !sub.emit(out) {
			return sub.ctx.Err()
		}
		if ev.Cursor >= target {
			markCaught()
		}
		return nil
	})
	if sub.ctx.Err() != nil {
		return
	}
	if absent(err) {
		sub.unfollow(name)
		return
	}
	if _, ok := status.FromError(err); ok && err != nil {
		sub.fail(err)
		return
	}
	sub.fail(statusOf(sub.ctx, err))
}
