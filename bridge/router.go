package bridge

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/weftgate/weftgate/gateway"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// The router holds every claim and every unanswered question. One mutex
// guards it all: routing is a short scan, and every callback into the
// gateway (a verdict, a refusal) runs after the mutex is released, because
// the gateway may block on a full reply queue.

// fallback is why a question is answered by the policy, not a backend.
type fallback uint8

const (
	fbNone     fallback = iota // nobody claims the name
	fbTimeout                  // claimants did not answer in time, or left
	fbBusy                     // every claimant, or the document, is at its bound
	fbTooLarge                 // the question does not fit in a message
	fbGone                     // the bridge is shutting down
)

// ask is one question as the router tracks it across attempts.
type ask struct {
	kind    v1.QuestionKind
	name    string // what claims match
	doc     string // counted against MaxInFlightPerDocument when set
	exclude uint64 // a stream never asked (a backend's own write)
	// build makes the question once some stream claims it, so a name
	// nobody claims costs no conversion on the gateway's hub goroutine.
	// An accept question is built from accept instead, in the view its
	// claimant asked for (no closure per commit). Each form is built at
	// most once.
	build     func() *v1.Question
	accept    *gateway.AcceptRequest
	forms     [2]form // full, encoded; q nil until built
	triedRoom [2]uint64

	// Exactly one of answered and fellBack is called, once, without the
	// router's lock. progress may be called before answered. An accept
	// question sets verdict instead of both (no closures per commit).
	verdict  func(gateway.Verdict)
	answered func(*v1.Answer)
	progress func(*v1.CallProgress)
	fellBack func(fallback)

	// Guarded by router.mu.
	tried    []uint64 // stream ids; a question is rarely asked of more than one
	attempts int
	busy     bool
	st       *stream
	qid      uint64
	claimID  uint64
	timeout  time.Duration
	deadline time.Time
	slot     int // 1 + its index in router.due while assigned, else 0
	sent     bool
	encoded  bool // the current assignment takes forms[1]
	tooLarge bool // a claimant was passed over because its form is too large
	done     bool
	relayed  bool // asked by another node: never relayed onward
	counted  bool // holds one of perDoc[doc]
}

// form is a question as built for one commit view, and its size as sent.
type form struct {
	q    *v1.Question
	size int
}

// envelopeBytes bounds what send adds to a form: id, claim_id and attempt
// at their widest, and a timeout.
const envelopeBytes = 11 + 11 + 6 + 2 + 11 + 6

// form is a's question for a claim that wants the encoded view or not,
// built on first need. Building converts the whole commit, so start does
// it before taking the router's lock for the claim it expects to pick.
func (a *ask) form(encoded bool) *form {
	encoded = encoded && a.accept != nil
	i := 0
	if encoded {
		i = 1
	}
	f := &a.forms[i]
	if f.q == nil {
		if a.accept != nil {
			f.q = acceptQuestion(a.accept, encoded)
		} else {
			f.q = a.build()
		}
		f.size = f.q.SizeVT() + envelopeBytes
	}
	return f
}

// claim is one claim in force.
type claim struct {
	st      *stream
	id      uint64
	pat     pattern
	kinds   uint32 // bit per QuestionKind
	timeout time.Duration
	encoded bool // COMMIT_VIEW_ENCODED
}

func (c *claim) has(k v1.QuestionKind) bool { return c.kinds&(1<<uint(k)) != 0 }

// Stats are the router's counters.
type Stats struct {
	Asked          atomic.Uint64 // questions sent to a stream
	Reasked        atomic.Uint64 // sent again after a timeout or a lost stream
	Answered       atomic.Uint64 // final answers taken
	Ignored        atomic.Uint64 // answers to unknown or answered ids
	TimedOut       atomic.Uint64
	FellBack       atomic.Uint64 // answered by the policy
	Busy           atomic.Uint64 // refused for a bound
	StreamsOpen    atomic.Int64
	SubscribersNow atomic.Int64
	// Unauthenticated is calls refused for their token before their body
	// was read; no interceptor, log line or call metric sees them.
	Unauthenticated atomic.Uint64
	// Relayed is questions another node's backend answered (decision 034).
	Relayed atomic.Uint64
}

type router struct {
	cfg   *Config
	stats *Stats

	mu      sync.Mutex
	closed  bool
	claims  []*claim // in grant order, oldest first
	streams map[uint64]*stream
	perDoc  map[string]int
	health  map[string]*backendHealth // by backend name, bounded

	relaySlots chan struct{} // questions out at other nodes, up to maxRelayed

	due     deadlines // every assigned ask, earliest deadline first
	timer   *time.Timer
	timerAt time.Time // when timer fires; zero when it does not
}

func newRouter(cfg *Config, stats *Stats) *router {
	return &router{cfg: cfg, stats: stats, streams: map[uint64]*stream{}, perDoc: map[string]int{}, relaySlots: make(chan struct{}, maxRelayed)}
}

// start routes a new question. The outcome arrives through a's callbacks.
func (r *router) start(a *ask) {
	r.mu.Lock()
	closed := r.closed
	claimed := !closed && r.anyClaimant(a)
	if !claimed {
		a.done = true
	}
	// The view of the claimant it will go to, to build that form unlocked.
	var encoded bool
	if claimed {
		if c := r.pick(a); c != nil {
			encoded = c.encoded
		}
	}
	r.mu.Unlock()
	switch {
	case closed:
		r.fellBack(a, fbGone)
		return
	case !claimed && r.cfg.Relay != nil && !a.relayed:
		r.relay(a)
		return
	case !claimed:
		r.fellBack(a, fbNone)
		return
	}
	a.tried = a.triedRoom[:0]
	a.form(encoded)
	r.mu.Lock()
	var fb fallback
	final := true
	switch {
	case r.closed:
		fb = fbGone
	case a.doc != "" && r.perDoc[a.doc] >= r.cfg.MaxInFlightPerDocument:
		fb = fbBusy
	default:
		if a.doc != "" {
			r.perDoc[a.doc]++
			a.counted = true
		}
		fb, final = r.place(a)
		if final {
			r.finish(a)
		}
	}
	r.mu.Unlock()
	if final {
		r.fellBack(a, fb)
	}
}

// questionRoom is the largest question that fits one message, leaving room
// for the Questions envelope.
func (r *router) questionRoom() int { return r.cfg.MaxSendMessageBytes - 64 }

func (r *router) fellBack(a *ask, fb fallback) {
	r.stats.FellBack.Add(1)
	if fb == fbBusy {
		r.stats.Busy.Add(1)
	}
	if a.verdict != nil {
		a.verdict(acceptFallback(r.cfg, a.name, fb))
		return
	}
	a.fellBack(fb)
}

// anyClaimant reports whether some stream claims a's name, tried or not.
func (r *router) anyClaimant(a *ask) bool {
	for _, c := range r.claims {
		if c.has(a.kind) && c.pat.match(a.name) && c.st.id != a.exclude {
			return true
		}
	}
	return false
}

// pick is the claim a goes to next: the most specific pattern, then the
// oldest claim, on a stream a has not been asked on.
func (r *router) pick(a *ask) *claim {
	var best *claim
	rank := -1
	for _, c := range r.claims {
		if !c.has(a.kind) || c.st.gone || c.st.id == a.exclude || !c.pat.match(a.name) {
			continue
		}
		if slices.Contains(a.tried, c.st.id) {
			continue
		}
		if rk := c.pat.rank(); rk > rank {
			best, rank = c, rk
		}
	}
	return best
}

// place gives a to its next claimant. It returns final true with the
// fallback that answers a when no claimant is left.
func (r *router) place(a *ask) (fallback, bool) {
	for {
		if r.closed {
			return fbGone, true
		}
		if a.attempts >= r.cfg.MaxAttempts {
			return fbTimeout, true
		}
		c := r.pick(a)
		if c == nil {
			switch {
			case a.attempts > 0:
				return fbTimeout, true
			case a.busy:
				return fbBusy, true
			case a.tooLarge:
				return fbTooLarge, true
			}
			return fbNone, true
		}
		st := c.st
		a.tried = append(a.tried, st.id)
		if a.form(c.encoded).size > r.questionRoom() {
			a.tooLarge = true
			continue
		}
		if st.inflight >= st.max && len(st.held) >= r.cfg.MaxHeldPerStream {
			a.busy = true
			continue
		}
		r.assign(a, c)
		return 0, false
	}
}

func (r *router) assign(a *ask, c *claim) {
	st := c.st
	a.attempts++
	if a.attempts > 1 {
		r.stats.Reasked.Add(1)
	}
	st.nextQID++
	a.st, a.qid, a.claimID, a.timeout, a.sent, a.encoded = st, st.nextQID, c.id, c.timeout, false, c.encoded
	st.asks[a.qid] = a
	a.deadline = time.Now().Add(a.timeout)
	r.arm(a)
	if st.inflight < st.max {
		r.send(a)
	} else {
		st.held = append(st.held, a)
	}
}

func (r *router) send(a *ask) {
	st := a.st
	st.inflight++
	a.sent = true
	left := max(time.Until(a.deadline), 0)
	f := a.form(a.encoded)
	m := new(sentQuestion) // one allocation for the two
	m.timeout.Seconds, m.timeout.Nanos = int64(left/time.Second), int32(left%time.Second)
	m.q = v1.Question{Id: a.qid, ClaimId: a.claimID, Attempt: uint32(a.attempts), Timeout: &m.timeout, Kind: f.q.Kind}
	r.stats.Asked.Add(1)
	st.out.pushQuestion(&m.q, f.size)
}

type sentQuestion struct {
	q       v1.Question
	timeout durationpb.Duration
}

// detach takes a off its stream, telling the backend why when it had been
// sent (why 0 sends nothing), and lets a held question take its place.
func (r *router) detach(a *ask, why v1.WithdrawReason) {
	st := a.st
	if st == nil {
		return
	}
	r.disarm(a)
	delete(st.asks, a.qid)
	if a.sent {
		st.inflight--
		if why != 0 && !st.gone {
			st.out.push(&v1.AuthorityResponse{Message: &v1.AuthorityResponse_Withdrawn{Withdrawn: &v1.Withdrawn{QuestionIds: []uint64{a.qid}, Reason: why}}})
		}
	} else if i := slices.Index(st.held, a); i >= 0 {
		st.held = slices.Delete(st.held, i, i+1)
	}
	a.st, a.sent = nil, false
	r.promote(st)
}

// promote sends held questions while the stream has room.
func (r *router) promote(st *stream) {
	for !st.gone && st.inflight < st.max && len(st.held) > 0 {
		a := st.held[0]
		st.held[0] = nil
		st.held = st.held[1:]
		r.send(a)
	}
}

// finish ends a's life in the router.
func (r *router) finish(a *ask) {
	a.done = true
	r.disarm(a)
	if a.counted {
		a.counted = false
		if n := r.perDoc[a.doc] - 1; n > 0 {
			r.perDoc[a.doc] = n
		} else {
			delete(r.perDoc, a.doc)
		}
	}
}

// answer takes one answer from st.
func (r *router) answer(st *stream, ans *v1.Answer) {
	if ans == nil {
		r.stats.Ignored.Add(1)
		return
	}
	r.mu.Lock()
	a := st.asks[ans.QuestionId]
	if a == nil || !a.sent || a.done {
		r.mu.Unlock()
		r.stats.Ignored.Add(1)
		return
	}
	if p, ok := ans.Kind.(*v1.Answer_CallProgress); ok && a.kind == v1.QuestionKind_QUESTION_KIND_CALL {
		// Progress restarts the question's timeout.
		a.deadline = time.Now().Add(a.timeout)
		r.arm(a)
		r.mu.Unlock()
		if a.progress != nil && p.CallProgress != nil {
			a.progress(p.CallProgress)
		}
		return
	}
	r.detach(a, 0)
	r.finish(a)
	r.healthOf(st.backend).failures = 0
	r.mu.Unlock()
	r.stats.Answered.Add(1)
	if a.verdict != nil {
		a.verdict(acceptVerdict(ans))
		return
	}
	a.answered(ans)
}

// cancel withdraws a question whose asker went away; nothing answers it.
func (r *router) cancel(a *ask) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a.done {
		return
	}
	r.detach(a, v1.WithdrawReason_WITHDRAW_REASON_CANCELLED)
	r.finish(a)
}

// addStream registers a stream; false when the bridge is closing.
func (r *router) addStream(st *stream) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.streams[st.id] = st
	r.healthOf(st.backend).streams++
	return true
}

// streamGone ends st's claims and moves its unanswered questions on.
func (r *router) streamGone(st *stream) {
	r.mu.Lock()
	if st.gone {
		r.mu.Unlock()
		return
	}
	st.gone = true
	delete(r.streams, st.id)
	h := r.healthOf(st.backend)
	h.streams--
	h.goneAt = time.Now()
	// A stream that ends on an error, or with questions unanswered, failed;
	// a backend that closes cleanly with nothing outstanding did not.
	var why string
	select {
	case <-st.killed:
		if st.killErr != nil {
			why = "the stream ended: " + st.killErr.Error()
		}
	default:
	}
	if why == "" && len(st.asks) > 0 {
		why = fmt.Sprintf("the stream ended with %d questions unanswered", len(st.asks))
	}
	if why != "" && !r.closed {
		r.failed(st.backend, why)
	}
	r.claims = slices.DeleteFunc(r.claims, func(c *claim) bool { return c.st == st })
	st.claims = map[uint64]*claim{}
	asks := make([]*ask, 0, len(st.asks))
	for _, a := range st.asks {
		asks = append(asks, a)
	}
	slices.SortFunc(asks, func(x, y *ask) int { return cmpU64(x.qid, y.qid) })
	st.asks, st.held, st.inflight = map[uint64]*ask{}, nil, 0
	var fell []fallen
	for _, a := range asks {
		r.disarm(a)
		a.st, a.sent = nil, false
		if fb, final := r.place(a); final {
			r.finish(a)
			fell = append(fell, fallen{a, fb})
		}
	}
	r.mu.Unlock()
	for _, f := range fell {
		r.fellBack(f.a, f.fb)
	}
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// close refuses new questions and returns the streams to end.
func (r *router) close() []*stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	out := make([]*stream, 0, len(r.streams))
	for _, st := range r.streams {
		out = append(out, st)
	}
	return out
}
