package link

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/weftgate/weftgate/protocol/frame"
)

// Two links wired back to back through the real frame codec, each end with
// a document (model_test.go): an ordered list of commits, or a real
// protocol/document through the commit codec. Frames cross in random
// bursts, so opens, commits and states interleave in every order.

type scenario struct {
	name string
	// Each end's starting document (nil: holds nothing) and the want its
	// Share sets; resync is the JS reconnect: Resync right after Share.
	docA, docB     []string
	wantA, wantB   bool
	resyncB        bool
	window         int
	refuse         bool // refuse some commits at random
	sameEverywhere bool // both documents must end with the same commits
}

var scenarios = []scenario{
	{name: "both-hold", docA: []string{"g1", "g2"}, docB: []string{"g1", "g2"}, window: 1 << 12, refuse: true, sameEverywhere: true},
	{name: "small-window", docA: []string{"g1"}, docB: []string{"g1"}, window: 3, refuse: true},
	{name: "state", docA: []string{"g1", "g2", "g3"}, wantB: true, window: 1 << 12, refuse: true, sameEverywhere: true},
	{name: "reconnect", docB: []string{"g1", "g2", "g3"}, wantA: true, resyncB: true, window: 1 << 12, sameEverywhere: true},
}

var root = &frame.Root{ID: [12]byte{'r', 'o', 'o', 't'}}

// end is one side: its link and what the test knows about it.
type end struct {
	name     string
	l        *Link
	r        *rand.Rand
	sc       scenario
	want     bool
	resync   bool
	holds    bool
	topic    uint64
	waiting  bool // our own want is outstanding: we do not write
	doc      model
	sent     []string    // sent[seq-1]: the key
	bytes    [][2][]byte // the commit and undo sent under each seq
	liveAt   int         // how many commits were sent before live
	arrived  []string    // "seq:commit" for every CommitsArrived
	refused  []uint64    // seqs we refused, in order
	reported []uint64    // seqs the peer refused, in order
	ended    int
	inbox    []frame.Frame
	other    *end
}

func TestConverge(t *testing.T) {
	models := map[string]func([]string) model{"list": newList, "document": newDoc}
	for _, m := range []string{"list", "document"} {
		for _, sc := range scenarios {
			for seed := uint64(1); seed <= 100; seed++ {
				t.Run(fmt.Sprintf("%s/%s/%d", m, sc.name, seed), func(t *testing.T) { converge(t, sc, models[m], seed) })
			}
		}
	}
}

func converge(t *testing.T, sc scenario, newModel func([]string) model, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	a := &end{name: "A", sc: sc, want: sc.wantA, holds: sc.docA != nil, doc: newModel(sc.docA)}
	b := &end{name: "B", sc: sc, want: sc.wantB, resync: sc.resyncB, holds: sc.docB != nil, doc: newModel(sc.docB)}
	a.other, b.other = b, a
	for _, e := range []*end{a, b} {
		e.l, e.r = New(Config{Window: sc.window}), r
	}
	for step := 0; step < 400; step++ {
		e := []*end{a, b}[r.IntN(2)]
		switch n := r.IntN(10); {
		case e.topic == 0 && n == 0:
			e.share(t)
		case n < 4:
			e.write(t)
		default:
			e.deliver(t, 1+r.IntN(4))
		}
	}
	for _, e := range []*end{a, b} {
		if e.topic == 0 {
			e.share(t)
		}
	}
	quiesce(t, a, b)
	for _, e := range []*end{a, b} {
		e.checkArrived(t)
		if !slices.Equal(e.refused, e.other.reported) {
			t.Fatalf("%s refused seqs %v; %s heard %v", e.name, e.refused, e.other.name, e.other.reported)
		}
	}
	if sc.sameEverywhere {
		ka, kb := a.doc.keys(), b.doc.keys()
		if !slices.Equal(ka, kb) {
			t.Fatalf("documents differ:\nA %v\nB %v", ka, kb)
		}
		// A real document's state is canonical: equal documents, equal bytes.
		if _, real := a.doc.(*docModel); real && !reflect.DeepEqual(a.doc.state(), b.doc.state()) {
			t.Fatalf("states differ:\nA %q\nB %q", a.doc.state(), b.doc.state())
		}
		for _, g := range append(sc.docA, sc.docB...) {
			if !slices.Contains(ka, g) {
				t.Fatalf("the starting commit %s was lost: %v", g, ka)
			}
		}
	}
	if err := a.l.Leave(a.topic); err != nil {
		t.Fatal(err)
	}
	a.handle(t)
	quiesce(t, a, b)
	if a.ended != 1 || b.ended != 1 {
		t.Fatalf("Ended seen %d times at A and %d at B, want once each", a.ended, b.ended)
	}
}

func quiesce(t *testing.T, a, b *end) {
	for len(a.inbox)+len(b.inbox) > 0 {
		a.deliver(t, len(a.inbox))
		b.deliver(t, len(b.inbox))
	}
}

func (e *end) share(t *testing.T) {
	var rt *frame.Root
	if e.holds {
		rt = root
	}
	n, err := e.l.Share("doc", rt, e.want)
	if err != nil {
		t.Fatalf("%s: share: %v", e.name, err)
	}
	e.topic, e.waiting = n, e.want
	if e.resync {
		if err := e.l.Resync(n); err != nil {
			t.Fatal(err)
		}
		e.waiting = true
	}
	e.handle(t)
}

func (e *end) write(t *testing.T) {
	if e.topic == 0 || e.waiting {
		return
	}
	key := fmt.Sprintf("%s%d", e.name, len(e.sent)+1)
	c, undo := e.doc.write(key)
	seq, err := e.l.Send(e.topic, c, undo)
	if err != nil || seq != uint64(len(e.sent)+1) {
		t.Fatalf("%s: send %s: seq %d, %v", e.name, key, seq, err)
	}
	e.sent = append(e.sent, key)
	e.bytes = append(e.bytes, [2][]byte{c, undo})
	e.handle(t)
}

// deliver hands the next n frames in flight to this end.
func (e *end) deliver(t *testing.T, n int) {
	for ; n > 0 && len(e.inbox) > 0; n-- {
		f := e.inbox[0]
		e.inbox = e.inbox[1:]
		e.l.Receive(f)
		e.handle(t)
	}
}

// handle carries the link's outputs: frames through the codec to the other
// end, and events to this end's document.
func (e *end) handle(t *testing.T) {
	for {
		out, evs := e.l.Flush(), e.l.Events()
		if len(out)+len(evs) == 0 {
			return
		}
		e.carry(t, out)
		for _, ev := range evs {
			e.event(t, ev) // may call the link, which the next round carries
		}
	}
}

func (e *end) carry(t *testing.T, out []frame.Frame) {
	for _, f := range out {
		if f.Kind == frame.Fault {
			t.Fatalf("%s sent a fault: %+v", e.name, f)
		}
		b, err := frame.Encode(f)
		if err != nil {
			t.Fatalf("%s: encode %+v: %v", e.name, f, err)
		}
		g, err := frame.Decode(b)
		if err != nil || !reflect.DeepEqual(f, g) {
			t.Fatalf("%s: %+v re-decodes as %+v, %v", e.name, f, g, err)
		}
		e.other.inbox = append(e.other.inbox, g)
	}
}

func (e *end) event(t *testing.T, ev Event) {
	switch ev := ev.(type) {
	case PeerOpened:
		e.share(t) // lazily, as the gateway does
	case Live:
		e.liveAt = len(e.sent)
	case StateWanted:
		if err := e.l.SendState(ev.Topic, e.doc.state()); err != nil {
			t.Fatal(err)
		}
	case StateArrived:
		if err := e.doc.setState(ev.State); err != nil {
			t.Fatalf("%s: state: %v", e.name, err)
		}
		e.waiting = false
	case CommitsArrived:
		e.arrived = append(e.arrived, fmt.Sprintf("%d:%x", ev.Seq, ev.Commit))
		if e.sc.refuse && e.r.IntN(8) == 0 {
			e.refused = append(e.refused, ev.Seq)
			if err := e.l.Refuse(ev.Topic, ev.Seq, []frame.Reason{{Code: "no", Message: "test"}}); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := e.doc.apply(ev.Commit); err != nil {
			t.Fatalf("%s: apply: %v", e.name, err)
		}
	case PeerRefused:
		e.reported = append(e.reported, ev.Seq)
		e.refusedByPeer(t, ev)
	case Ended:
		if ev.Reason != Left {
			t.Fatalf("%s: topic ended %s: %s", e.name, ev.Reason, ev.Message)
		}
		e.ended++
	default:
		t.Fatalf("%s: unexpected %#v", e.name, ev)
	}
}

// refusedByPeer checks the window: the commit and undo come back exactly
// when seq is one of the last Window commits sent, and then we yield.
func (e *end) refusedByPeer(t *testing.T, ev PeerRefused) {
	seq := int(ev.Seq)
	inside := seq > len(e.sent)-e.sc.window && seq > e.covered()
	if inside != (ev.Commit != nil) {
		t.Fatalf("%s: refusal of seq %d with %d sent, window %d: commit %q", e.name, seq, len(e.sent), e.sc.window, ev.Commit)
	}
	if !inside {
		return
	}
	sent := e.bytes[seq-1]
	if !reflect.DeepEqual(ev.Commit, sent[0]) || !reflect.DeepEqual(ev.Undo, sent[1]) {
		t.Fatalf("%s: refusal of seq %d carries %q/%q, sent %q/%q", e.name, seq, ev.Commit, ev.Undo, sent[0], sent[1])
	}
	if err := e.doc.undo(ev.Undo); err != nil {
		t.Fatalf("%s: undo seq %d: %v", e.name, seq, err)
	}
}

// covered is how many of our commits a state covered: those sent before
// live, when the peer's first open wanted our state.
func (e *end) covered() int {
	if e.other.want {
		return e.liveAt
	}
	return 0
}

// checkArrived: every commit the other end sent and no state covered
// arrived here exactly once, in order, with its number.
func (e *end) checkArrived(t *testing.T) {
	o := e.other
	var want []string
	for i := o.covered(); i < len(o.sent); i++ {
		want = append(want, fmt.Sprintf("%d:%x", i+1, o.bytes[i][0]))
	}
	if !slices.Equal(e.arrived, want) {
		t.Fatalf("%s received %v\nfrom %s, which sent %v (covered %d)", e.name, e.arrived, o.name, want, o.covered())
	}
}
