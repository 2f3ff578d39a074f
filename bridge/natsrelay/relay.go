package natsrelay

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/weftgate/weftgate/bridge"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol/commit"
)

// Defaults for the zero Options.
const (
	DefaultBucket  = "WEFT_NODES"
	DefaultSubject = "weft.relay"
	// DefaultTTL is how long a node's entry counts without a refresh;
	// entries are refreshed every third of it.
	DefaultTTL = 15 * time.Second
)

// Options tune a Relay. The zero value works.
type Options struct {
	Bucket   string        // the KV bucket of nodes and their claims
	Subject  string        // prefix of each node's request subject
	TTL      time.Duration // see DefaultTTL
	Replicas int           // of the bucket: 1, or 3 with a NATS cluster
	// Node names this node; empty picks a random one.
	Node string
	// Addr is what this node tells others about itself (its gRPC
	// address), shown in their status.
	Addr string
}

// Node is another node as this one knows it.
type Node struct {
	ID     string              `json:"id"`
	Addr   string              `json:"addr,omitempty"`
	Claims []bridge.RelayClaim `json:"claims"`
	Seen   time.Time           `json:"seen"`
}

// Relay is one node's side of the relay.
type Relay struct {
	nc   *nats.Conn
	kv   jetstream.KeyValue
	o    Options
	stop context.CancelFunc
	wg   sync.WaitGroup
	kick chan struct{}

	mu     sync.Mutex
	mine   []bridge.RelayClaim
	others map[string]Node
	sub    *nats.Subscription
}

// New joins the relay on nc: it creates or binds the bucket and watches it.
// Serve starts answering other nodes.
func New(ctx context.Context, nc *nats.Conn, o Options) (*Relay, error) {
	if o.Bucket == "" {
		o.Bucket = DefaultBucket
	}
	if o.Subject == "" {
		o.Subject = DefaultSubject
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.Replicas <= 0 {
		o.Replicas = 1
	}
	if o.Node == "" {
		o.Node = "n" + commit.NewID().String()
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: o.Bucket, TTL: o.TTL, Replicas: o.Replicas, History: 1})
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(context.Background())
	r := &Relay{nc: nc, kv: kv, o: o, stop: cancel, kick: make(chan struct{}, 1), others: map[string]Node{}}
	w, err := kv.WatchAll(rctx)
	if err != nil {
		cancel()
		return nil, err
	}
	r.wg.Add(2)
	go r.watch(w)
	go r.refresh(rctx)
	return r, nil
}

// ID is this node's id.
func (r *Relay) ID() string { return r.o.Node }

// Serve answers other nodes' questions through s.
func (r *Relay) Serve(s *bridge.Server) error {
	sub, err := r.nc.Subscribe(r.o.Subject+"."+r.o.Node, func(m *nats.Msg) {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.answer(s, m)
		}()
	})
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.sub = sub
	r.mu.Unlock()
	return nil
}

const (
	hdrKind    = "Weft-Kind"
	hdrName    = "Weft-Name"
	hdrTimeout = "Weft-Timeout"
	hdrNone    = "Weft-None"
)

func (r *Relay) answer(s *bridge.Server, m *nats.Msg) {
	reply := nats.NewMsg(m.Reply)
	none := func() {
		reply.Header.Set(hdrNone, "1")
		m.RespondMsg(reply)
	}
	kind, err := strconv.Atoi(m.Header.Get(hdrKind))
	name, err2 := base64.RawURLEncoding.DecodeString(m.Header.Get(hdrName))
	timeout, err3 := time.ParseDuration(m.Header.Get(hdrTimeout))
	q := new(v1.Question)
	if err != nil || err2 != nil || err3 != nil || proto.Unmarshal(m.Data, q) != nil {
		none()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ans, ok := s.AnswerRelayed(ctx, v1.QuestionKind(kind), string(name), q)
	if !ok {
		none()
		return
	}
	b, err := proto.Marshal(ans)
	if err != nil {
		none()
		return
	}
	reply.Data = b
	m.RespondMsg(reply)
}

// Ask implements bridge.Relay: it asks each other node whose claims take
// the question, most specific claim first, until one answers.
func (r *Relay) Ask(ctx context.Context, kind v1.QuestionKind, name string, q *v1.Question) (*v1.Answer, bool, error) {
	nodes := r.candidates(kind, name)
	if len(nodes) == 0 {
		return nil, false, nil
	}
	body, err := proto.Marshal(q)
	if err != nil {
		return nil, false, err
	}
	var last error
	for _, id := range nodes {
		m := nats.NewMsg(r.o.Subject + "." + id)
		m.Data = body
		m.Header.Set(hdrKind, strconv.Itoa(int(kind)))
		m.Header.Set(hdrName, base64.RawURLEncoding.EncodeToString([]byte(name)))
		left := time.Second
		if dl, ok := ctx.Deadline(); ok {
			left = time.Until(dl)
		}
		m.Header.Set(hdrTimeout, left.String())
		res, err := r.nc.RequestMsgWithContext(ctx, m)
		if err != nil {
			last = err
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if res.Header.Get(hdrNone) != "" {
			continue
		}
		ans := new(v1.Answer)
		if err := proto.Unmarshal(res.Data, ans); err != nil {
			last = err
			continue
		}
		return ans, true, nil
	}
	return nil, false, last
}

// candidates are the live other nodes whose claims take the question,
// the most specific claim first.
func (r *Relay) candidates(kind v1.QuestionKind, name string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	type cand struct {
		id   string
		rank int
	}
	var cs []cand
	now := time.Now()
	for id, n := range r.others {
		if id == r.o.Node || now.Sub(n.Seen) > r.o.TTL {
			continue
		}
		best := -1
		for _, c := range n.Claims {
			if !c.Takes(kind, name) {
				continue
			}
			best = max(best, c.Rank())
		}
		if best >= 0 {
			cs = append(cs, cand{id, best})
		}
	}
	// Most specific first; then by id, so every node asks in one order.
	slices.SortFunc(cs, func(a, b cand) int {
		if c := cmp.Compare(b.rank, a.rank); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.id
	}
	return out
}

// Claims implements bridge.Relay: the entry is rewritten off the caller.
func (r *Relay) Claims(cs []bridge.RelayClaim) {
	r.mu.Lock()
	r.mine = cs
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Nodes are the other live nodes this one knows, for the status.
func (r *Relay) Nodes() []Node {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Node
	now := time.Now()
	for id, n := range r.others {
		if id != r.o.Node && now.Sub(n.Seen) <= r.o.TTL {
			out = append(out, n)
		}
	}
	return out
}

func (r *Relay) refresh(ctx context.Context) {
	defer r.wg.Done()
	t := time.NewTicker(r.o.TTL / 3)
	defer t.Stop()
	for {
		r.mu.Lock()
		n := Node{ID: r.o.Node, Addr: r.o.Addr, Claims: r.mine, Seen: time.Now()}
		r.mu.Unlock()
		if b, err := json.Marshal(n); err == nil {
			pctx, cancel := context.WithTimeout(ctx, r.o.TTL/3)
			r.kv.Put(pctx, r.o.Node, b) // a failure is retried at the next tick
			cancel()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.kick:
		}
	}
}

func (r *Relay) watch(w jetstream.KeyWatcher) {
	defer r.wg.Done()
	defer w.Stop()
	for e := range w.Updates() {
		if e == nil {
			continue // the end of the initial values
		}
		r.mu.Lock()
		if e.Operation() != jetstream.KeyValuePut {
			delete(r.others, e.Key())
		} else {
			var n Node
			if json.Unmarshal(e.Value(), &n) == nil {
				// The writer's clock may differ: the time it arrived is
				// what ages it here.
				n.Seen = time.Now()
				r.others[e.Key()] = n
			}
		}
		r.mu.Unlock()
	}
}

// Close stops answering, removes this node's entry and stops watching.
func (r *Relay) Close() error {
	r.mu.Lock()
	sub := r.sub
	r.mu.Unlock()
	var err error
	if sub != nil {
		err = sub.Unsubscribe()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	if derr := r.kv.Delete(ctx, r.o.Node); derr != nil && !errors.Is(derr, jetstream.ErrKeyNotFound) && err == nil {
		err = derr
	}
	cancel()
	r.stop()
	r.wg.Wait()
	return err
}
