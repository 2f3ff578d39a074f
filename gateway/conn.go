package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"golang.org/x/time/rate"

	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/gateway/requests"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/gateway/tail"
	"github.com/weftgate/weftgate/internal/wsguard"
	"github.com/weftgate/weftgate/internal/wsread"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
	"github.com/weftgate/weftgate/protocol/link"
)

// conn is one WebSocket: one link. The reader goroutine reads the socket
// and decodes frames; the loop goroutine alone owns the link and writes the
// socket. Hubs reach the loop through post, which never blocks: a connection
// whose queue passes MaxPendingBytes is ended with slow-consumer.
type conn struct {
	srv      *Server
	ws       *websocket.Conn
	id       string
	addr     string // the peer's address, as the rate limit saw it
	identity admission.Identity
	origin   Origin
	// ctx ends with the connection's life; ioCtx outlives it until the
	// socket is closed, so the last fault and the close frame can still go
	// out (coder/websocket closes the socket when an I/O context ends).
	ctx      context.Context
	cancel   context.CancelFunc
	ioCtx    context.Context
	ioCancel context.CancelFunc

	frames  chan inbound      // reader to loop
	credits chan struct{}     // commits frames waiting for verdicts
	calls   *requests.Channel // the text request channel
	opens   *rate.Limiter     // peer opens per second; nil when unbounded

	mu     sync.Mutex
	queue  []connMsg
	queued int
	ended  bool
	endErr *endReason
	wake   chan struct{}
	// dirty are topics whose document's tail grew since the loop last
	// looked (each at most once: topicState.dirty).
	dirty []*topicState

	lastPong atomic.Int64 // unix nanoseconds
	// held: the reader waits for a commits frame's credit, so nothing,
	// pongs included, is read; holds counts those waits.
	held  atomic.Bool
	holds atomic.Int64

	// Owned by the loop goroutine.
	link    *link.Link
	topics  map[string]*topicState
	byTopic map[uint64]*topicState
	guard   *time.Timer // closes the socket when a flush outlasts WriteTimeout
	batch   *batchConn  // a flush's frames go out in one write call
	// behind are topics with more of their tail to read.
	behind []*topicState
}

// Scratch a link borrows for one pull or one flush and gives back: at
// thousands of links that each wrote, a buffer each of both was 55 MB
// of a 115 MB heap, pointers the collector scanned included (decision 040).
var (
	tailBufs = sync.Pool{New: func() any { return new([]tail.Entry[tailItem]) }}
	outBufs  = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}
)

// Past these a pull's or a flush's scratch is let go, not pooled.
const (
	maxKeptEntries  = 4096
	maxKeptOutBytes = 64 << 10
)

type topicState struct {
	name  string
	topic uint64 // ours, 0 until shared
	hub   *hub
	// number is topic for readers off the loop goroutine (the status).
	number atomic.Uint64
	// read is the cursor through which the document's tail was taken
	// into the link: stored by the loop as it reads, and by the hub when
	// the member joins or is sent its state; the hub measures lag by it.
	read atomic.Uint64
	// dirty: the hub woke the loop for this topic and the loop has not
	// looked yet (one wake per idle spell, not one per commit).
	dirty atomic.Bool

	// Owned by the loop goroutine. cursor is where the next read starts;
	// reading says the tail is read at all (not before the share, nor
	// while the peer waits for a state, which covers what it skips).
	cursor  uint64
	reading bool
	behind  bool // in conn.behind
}

type inbound struct {
	f      frame.Frame
	bad    *frame.BadFrameError
	credit *frameCredit
}

type msgKind uint8

const (
	msgShare msgKind = iota
	msgDecline
	msgState
	msgRefuse
	msgEnd
)

// connMsg is what a hub tells a connection about one of its documents.
type connMsg struct {
	kind    msgKind
	name    string
	root    *frame.Root
	want    bool
	data    []byte
	seq     uint64
	reasons []frame.Reason
	reason  protocol.Reason
	text    string
	// cursor, for a share or a state, is where the member's reading of
	// the tail starts; owed says a share's peer waits for a state first.
	cursor uint64
	owed   bool
}

// endReason is why a connection ended: a fault to send (if any) and the
// WebSocket close status.
type endReason struct {
	fault   protocol.Reason
	message string
	status  websocket.StatusCode
	// announce sends the fault on topic 0 before the close (slow-consumer
	// always does).
	announce bool
}

// slow says the peer did not keep up: its backlog passed its bound, or a
// write to it timed out. Both count as slow consumers.
func (r *endReason) slow() bool {
	return r.fault == ReasonSlowConsumer || r.fault == ReasonWriteTimeout
}

// frameCredit is released when every commit of one commits frame settled,
// so a connection has at most MaxFramesInFlight frames waiting.
type frameCredit struct {
	n atomic.Int32
	c *conn
}

func (f *frameCredit) done() {
	if f.n.Add(-1) == 0 {
		<-f.c.credits
	}
}

// post queues a message for the loop. It never blocks.
func (c *conn) post(m connMsg) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.queued += len(m.data) + 64
	if c.queued > c.srv.cfg.MaxPendingBytes {
		c.mu.Unlock()
		c.endSlow()
		return
	}
	c.queue = append(c.queue, m)
	c.mu.Unlock()
	c.wakeLoop()
}

// wakeLoop tells the loop something is ready; it never blocks.
func (c *conn) wakeLoop() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// endSlow ends a connection that did not keep up: its queue or its lag
// behind a document's tail passed MaxPendingBytes, or it fell off a tail.
func (c *conn) endSlow() {
	c.end(&endReason{fault: ReasonSlowConsumer, message: "the connection did not keep up with its documents", status: websocket.StatusPolicyViolation})
}

// wakeTopic tells the loop that ts's tail grew. It never blocks, and
// wakes the loop only when the topic was not already waiting.
func (c *conn) wakeTopic(ts *topicState) {
	if !ts.dirty.CompareAndSwap(false, true) {
		return
	}
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.dirty = append(c.dirty, ts)
	c.mu.Unlock()
	c.wakeLoop()
}

// end ends the connection once, for the first reason given.
func (c *conn) end(r *endReason) {
	c.mu.Lock()
	if c.ended {
		// A timed-out write closes the socket under the reader, which may
		// report the end first as closed: the writer's diagnosis wins.
		upgrade := r.slow() && c.endErr != nil && c.endErr.fault == ReasonClosed
		if upgrade {
			c.endErr = r
		}
		c.mu.Unlock()
		if upgrade {
			c.srv.metrics.slowConsumer()
		}
		return
	}
	c.ended = true
	c.endErr = r
	c.queue, c.dirty = nil, nil
	c.mu.Unlock()
	if r.slow() {
		c.srv.metrics.slowConsumer()
	}
	c.cancel()
}

func (c *conn) serve() {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.readLoop()
	}()
	if c.srv.cfg.PingInterval > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.pingLoop()
		}()
	}
	c.calls.Ready()
	c.loop()
	c.cancel()
	c.close() // the socket is closed, so a call's answer cannot hang Close
	c.calls.Close()
	c.ioCancel()
	wg.Wait()
}

func (c *conn) readLoop() {
	for {
		// No context: the socket's close ends the read (serve closes it
		// before it cancels ioCtx), and coder/websocket arms an AfterFunc
		// per read whose context can end.
		typ, data, err := wsread.Read(context.Background(), c.ws)
		if err != nil {
			status := websocket.CloseStatus(err)
			var bad *wsguard.Violation
			switch {
			case errors.As(err, &bad):
				c.end(&endReason{status: bad.Code})
			case errors.Is(err, websocket.ErrMessageTooBig) || status == websocket.StatusMessageTooBig:
				c.end(&endReason{status: websocket.StatusMessageTooBig})
			case status != -1:
				c.end(&endReason{status: status, fault: ReasonClosed})
			default:
				c.end(&endReason{status: websocket.StatusGoingAway, fault: ReasonClosed})
			}
			return
		}
		if typ == websocket.MessageText {
			if !utf8.Valid(data) {
				// RFC 6455 section 8.1: text is UTF-8, or the socket fails.
				c.end(&endReason{status: websocket.StatusInvalidFramePayloadData})
				return
			}
			if err := c.calls.Handle(data); errors.Is(err, requests.ErrViolation) {
				c.end(&endReason{status: websocket.StatusUnsupportedData})
				return
			}
			continue
		}
		in := inbound{}
		f, err := frame.Decode(data)
		if err != nil {
			var bad *frame.BadFrameError
			if !errors.As(err, &bad) {
				// Bytes that are not a frame end the link without a word.
				c.srv.metrics.fault("undecodable")
				c.end(&endReason{status: websocket.StatusUnsupportedData})
				return
			}
			in.bad = bad
		} else {
			in.f = f
			if f.Kind == frame.Commits {
				if !c.takeCredit() {
					return
				}
				in.credit = &frameCredit{c: c}
			}
		}
		select {
		case c.frames <- in:
		case <-c.ctx.Done():
			return
		}
	}
}

// takeCredit takes a commits frame's place among those waiting for
// verdicts. While it waits the socket is not read, so a pong (and the
// peer's close) waits behind the held-back data: the ping loop knows, and
// does not take the silence for a dead peer (it is alive enough to send
// faster than its verdicts come; a write timeout still finds a dead one).
func (c *conn) takeCredit() bool {
	select {
	case c.credits <- struct{}{}:
		return true
	default:
	}
	c.holds.Add(1)
	c.held.Store(true)
	defer c.held.Store(false)
	select {
	case c.credits <- struct{}{}:
		return true
	case <-c.ctx.Done():
		return false
	}
}

func (c *conn) pingLoop() {
	t := time.NewTicker(c.srv.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		holds := c.holds.Load()
		ctx, cancel := context.WithTimeout(c.ioCtx, c.srv.cfg.PingTimeout)
		err := c.ws.Ping(ctx)
		cancel()
		if err != nil && (c.held.Load() || c.holds.Load() != holds) && c.ctx.Err() == nil {
			continue // the pong waits behind data we hold back
		}
		if err != nil {
			if c.ctx.Err() == nil {
				c.end(&endReason{status: websocket.StatusGoingAway})
			}
			return
		}
		c.lastPong.Store(time.Now().UnixNano())
	}
}

func (c *conn) loop() {
	for {
		if len(c.behind) == 0 {
			select {
			case <-c.ctx.Done():
				return
			case in := <-c.frames:
				c.receive(in)
			case <-c.wake:
				c.drain()
			}
		} else {
			// More tail to read: the socket took the last round, so take
			// the next, after whatever else is ready.
			select {
			case <-c.ctx.Done():
				return
			case in := <-c.frames:
				c.receive(in)
			case <-c.wake:
				c.drain()
			default:
				c.pull()
				c.events(nil)
			}
		}
		// Take whatever else is ready so it leaves in one write burst.
	more:
		for i := 0; i < 64; i++ {
			select {
			case in := <-c.frames:
				c.receive(in)
			case <-c.wake:
				c.drain()
			default:
				break more
			}
		}
		if !c.write() {
			return
		}
	}
}

func (c *conn) receive(in inbound) {
	if in.bad != nil {
		c.link.BadFrame(in.bad.Topic, in.bad.Message)
		c.events(nil)
		return
	}
	c.link.Receive(in.f)
	c.events(in.credit)
}

// drain applies every queued hub message to the link, then reads the
// tails that grew.
func (c *conn) drain() {
	c.mu.Lock()
	q, dirty := c.queue, c.dirty
	c.queue, c.dirty = nil, nil
	c.queued = 0
	c.mu.Unlock()
	for i := range q {
		c.apply(&q[i])
	}
	for _, ts := range dirty {
		ts.dirty.Store(false) // before the read: a later append wakes us again
		c.markBehind(ts)
	}
	c.pull()
	c.events(nil)
}

// markBehind queues ts for the next pull.
func (c *conn) markBehind(ts *topicState) {
	if !ts.behind {
		ts.behind = true
		c.behind = append(c.behind, ts)
	}
}

// pullBytes bounds the commit bytes one pull takes per topic, so a link
// far behind writes between reads and still hears its peer.
const pullBytes = 1 << 20

// pull takes into the link, for each topic behind, the commits after its
// cursor: up to pullBytes each, batched by the link into as few frames as
// its frame bound allows. A topic still behind stays for the next pull.
// One that fell off its tail stops reading: the hub, which saw it fall,
// ends the connection as a slow consumer.
func (c *conn) pull() {
	buf := tailBufs.Get().(*[]tail.Entry[tailItem])
	keep := c.behind[:0]
	for _, ts := range c.behind {
		if c.topics[ts.name] != ts || !ts.reading || ts.topic == 0 {
			ts.behind = false
			continue
		}
		t := ts.hub.tail
		var es []tail.Entry[tailItem]
		var err error
		for {
			if r := ts.read.Load(); r > ts.cursor {
				// The hub moved it past a run of its own commits without
				// waking it (hub.deliver): there is nothing there to send,
				// and the hub may have let them go (hub.wakeMembers).
				ts.cursor = r
			}
			es, err = t.Read(ts.cursor, (*buf)[:0], pullBytes)
			if err == nil || ts.read.Load() <= ts.cursor {
				break // read, or fell off where the hub did not move it
			}
		}
		if err != nil {
			ts.reading, ts.behind = false, false
			continue
		}
		n := 0
		for i := range es {
			ts.cursor = es[i].Cursor
			if es[i].Item.link && es[i].Item.origin == c.id {
				continue // its own commit: never sent back
			}
			if _, err := c.link.Send(ts.topic, es[i].Bytes, nil); err != nil {
				c.faultTopic(ts, protocol.ReasonOf(err), err.Error())
				break
			}
			n++
		}
		clear(es) // the buffer must not pin commits the tail let go
		*buf = es[:0]
		c.srv.metrics.delivered(n)
		ts.read.Store(ts.cursor)
		if c.topics[ts.name] == ts && ts.reading && ts.cursor < t.Head() {
			keep = append(keep, ts)
		} else {
			ts.behind = false
		}
	}
	clear(c.behind[len(keep):])
	c.behind = keep
	if cap(*buf) <= maxKeptEntries {
		tailBufs.Put(buf)
	}
}

func (c *conn) apply(m *connMsg) {
	ts := c.topics[m.name]
	if ts == nil {
		return
	}
	switch m.kind {
	case msgShare:
		topic, err := c.link.Share(m.name, m.root, m.want)
		if err != nil {
			c.dropTopic(ts)
			return
		}
		ts.topic = topic
		ts.number.Store(topic)
		c.byTopic[topic] = ts
		ts.cursor, ts.reading = m.cursor, !m.owed
		ts.read.Store(m.cursor)
		c.markBehind(ts)
	case msgDecline:
		if m.reason == "" || m.reason == protocol.NoDocument {
			c.link.Decline(m.name)
		} else {
			c.link.DeclineWith(m.name, m.reason, m.text)
		}
		c.dropTopic(ts)
	case msgState:
		if ts.topic != 0 {
			if err := c.link.SendState(ts.topic, m.data); err != nil && !errors.Is(err, link.ErrNotWanted) {
				// A state that cannot be sent (too large for one message)
				// ends this topic with why, never silence or the link.
				c.faultTopic(ts, ReasonDocumentTooLarge, err.Error())
				return
			}
			// The state covers everything through its cursor; the
			// commits after it come from the tail.
			ts.cursor, ts.reading = m.cursor, true
			ts.read.Store(m.cursor)
			c.markBehind(ts)
		}
	case msgRefuse:
		if ts.topic != 0 {
			c.link.Refuse(ts.topic, m.seq, m.reasons)
		}
	case msgEnd:
		if ts.topic != 0 {
			c.link.Fault(ts.topic, m.reason, m.text)
		}
	}
}

// faultTopic ends one topic with a fault the peer can act on.
func (c *conn) faultTopic(ts *topicState, r protocol.Reason, msg string) {
	if r == "" {
		r = ReasonInternal
	}
	c.srv.metrics.fault(string(r))
	c.link.Fault(ts.topic, r, msg)
	c.dropTopic(ts)
}

// events carries out what the link asks of the application.
func (c *conn) events(credit *frameCredit) {
	if credit != nil {
		credit.n.Store(1) // ours, released below
	}
	for _, ev := range c.link.Events() {
		switch e := ev.(type) {
		case link.PeerOpened:
			c.peerOpened(e)
		case link.StateWanted:
			if ts := c.byTopic[e.Topic]; ts != nil {
				// The state will cover what it would read meanwhile.
				ts.reading = false
				ts.hub.post(wantMsg{c})
			}
		case link.CommitsArrived:
			c.commitArrived(e, credit)
		case link.StateArrived:
			c.stateArrived(e)
		case link.PeerRefused:
			c.srv.metrics.peerRefused()
		case link.Ended:
			if ts := c.byTopic[e.Topic]; ts != nil {
				c.dropTopic(ts)
			}
		case link.LinkEnded:
			c.end(&endReason{status: websocket.StatusNormalClosure})
		}
	}
	if credit != nil {
		credit.done()
	}
}

func (c *conn) peerOpened(e link.PeerOpened) {
	if c.topics[e.Name] != nil {
		return // the link pairs it with the share already under way
	}
	if c.opens != nil && !c.opens.Allow() {
		// Each open may start a hub and a store read: a link that opens
		// faster than any application does is told so, per name.
		c.srv.metrics.fault(string(ReasonTooManyOpens))
		c.link.DeclineWith(e.Name, ReasonTooManyOpens, "this link opens documents too fast; slow down")
		return
	}
	if len(e.Name) == 0 || len(e.Name) > store.MaxNameBytes {
		// Refused before any hub, store or log sees the name.
		c.link.DeclineWith(e.Name, ReasonBadName, fmt.Sprintf("a document name is 1 to %d bytes", store.MaxNameBytes))
		return
	}
	h := c.srv.reg.acquire(e.Name)
	if h == nil {
		c.link.DeclineWith(e.Name, ReasonTooManyDocuments, "the gateway holds as many documents as it may; retry later")
		return
	}
	ts := &topicState{name: e.Name, hub: h}
	c.topics[e.Name] = ts
	root, want := e.Root, e.Want
	h.post(openMsg{c: c, ts: ts, root: root, want: want})
}

func (c *conn) commitArrived(e link.CommitsArrived, credit *frameCredit) {
	ts := c.byTopic[e.Topic]
	if ts == nil {
		return
	}
	c.srv.metrics.received()
	cm, err := commit.DecodeWithLimits(e.Commit, c.srv.cfg.CommitLimits)
	if err != nil {
		c.srv.metrics.refused(err)
		c.link.Refuse(e.Topic, e.Seq, reasonsOf(err))
		return
	}
	p := &pendingCommit{origin: c.origin, from: c, seq: e.Seq, c: cm, bytes: e.Commit}
	if credit != nil {
		credit.n.Add(1)
		p.credit = credit
	}
	h := ts.hub
	h.post(commitMsg{p})
}

func (c *conn) stateArrived(e link.StateArrived) {
	ts := c.byTopic[e.Topic]
	if ts == nil {
		return
	}
	var st commit.Commit
	if e.State != nil {
		var err error
		st, err = commit.DecodeWithLimits(e.State, c.srv.cfg.CommitLimits)
		if err != nil {
			c.link.Fault(e.Topic, protocol.ReasonOf(err), err.Error())
			c.dropTopic(ts)
			return
		}
	}
	h := ts.hub
	h.post(stateMsg{c: c, st: st})
}

// dropTopic forgets a topic and lets its hub go.
func (c *conn) dropTopic(ts *topicState) {
	delete(c.topics, ts.name)
	if ts.topic != 0 {
		delete(c.byTopic, ts.topic)
	}
	ts.hub.post(leaveMsg{c})
	c.srv.reg.release(ts.hub)
}

// write sends every frame the link has ready, one message each, within one
// WriteTimeout for the whole flush. One timer, reset for each flush, bounds
// it: a context per frame cost ~9% of the loop, and one per flush is one
// per frame when frames do not batch. When the timer fires it closes the
// socket, which fails the write.
func (c *conn) write() bool {
	frames := c.link.Flush()
	if len(frames) == 0 {
		return true
	}
	if c.guard == nil {
		c.guard = time.AfterFunc(c.srv.cfg.WriteTimeout, func() { c.ws.CloseNow() })
	} else {
		c.guard.Reset(c.srv.cfg.WriteTimeout)
	}
	ok := c.writeFrames(frames)
	c.link.Recycle(frames)
	if !c.guard.Stop() && ok {
		// It fired as the last write ended: the socket is closed all the same.
		c.end(&endReason{fault: ReasonWriteTimeout, message: "a write to the socket timed out", status: websocket.StatusPolicyViolation})
		return false
	}
	return ok
}

func (c *conn) writeFrames(frames []frame.Frame) bool {
	ctx := context.Background() // the guard bounds the writes; see readLoop
	if c.batch != nil {
		c.batch.hold()
	}
	ok := c.writeEach(ctx, frames)
	if c.batch != nil {
		if err := c.batch.release(); err != nil && ok {
			c.end(&endReason{fault: ReasonWriteTimeout, message: "a write to the socket timed out", status: websocket.StatusPolicyViolation})
			ok = false
		}
	}
	return ok
}

// writeEach hands the library each frame as one message.
func (c *conn) writeEach(ctx context.Context, frames []frame.Frame) bool {
	buf := outBufs.Get().(*[]byte)
	defer func() {
		if cap(*buf) <= maxKeptOutBytes {
			outBufs.Put(buf)
		}
	}()
	for _, f := range frames {
		var err error
		*buf, err = frame.Append((*buf)[:0], f)
		if err != nil {
			c.srv.log.Error("encode frame", "conn", c.id, "err", err)
			c.end(&endReason{status: websocket.StatusInternalError})
			return false
		}
		if err = c.ws.Write(ctx, websocket.MessageBinary, *buf); err != nil {
			c.end(&endReason{fault: ReasonWriteTimeout, message: "a write to the socket timed out", status: websocket.StatusPolicyViolation})
			return false
		}
	}
	return true
}

// close tells every hub this connection is gone, sends the link fault the
// end reason calls for, and closes the socket with its status.
func (c *conn) close() {
	for _, ts := range c.topics {
		ts.hub.post(leaveMsg{c})
		c.srv.reg.release(ts.hub)
	}
	c.topics, c.byTopic = nil, nil
	c.mu.Lock()
	r := c.endErr
	c.mu.Unlock()
	if r == nil {
		r = &endReason{status: websocket.StatusGoingAway}
	}
	if r.slow() || r.announce {
		// Best effort: the peer hears why before the close.
		c.link.FaultLink(r.fault, r.message)
		ctx, cancel := context.WithTimeout(c.ioCtx, time.Second)
		for _, f := range c.link.Flush() {
			if b, err := frame.Encode(f); err == nil {
				if c.ws.Write(ctx, websocket.MessageBinary, b) != nil {
					break
				}
			}
		}
		cancel()
	}
	switch r.status {
	case websocket.StatusNoStatusRcvd, websocket.StatusAbnormalClosure, -1:
		c.ws.CloseNow()
	default:
		c.ws.Close(r.status, string(r.fault))
	}
	c.srv.conns.Delete(c)
	c.srv.metrics.connClosed(r)
}
