package link

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/weftgate/weftgate/protocol/frame"
)

// Two links wired back to back through the real frame codec, each end with
// a "document" that is an ordered list of commits. Frames cross in random
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
	waiting  bool     // our own want is outstanding: we do not write
	doc      []string // the document: commits in the order applied
	sent     []string // sent[seq-1]
	liveAt   int      // how many commits were sent before live
	arrived  []string // "seq:commit" for every CommitsArrived
	refused  []uint64 // seqs we refused, in order
	reported []uint64 // seqs the peer refused, in order
	ended    int
	inbox    []frame.Frame
	other    *end
}

func TestConverge(t *testing.T) {
	for _, sc := range scenarios {
		for seed := uint64(1); seed <= 200; seed++ {
			t.Run(fmt.Sprintf("%s/%d", sc.name, seed), func(t *testing.T) { converge(t, sc, seed) })
		}
	}
}

func converge(t *testing.T, sc scenario, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	a := &end{name: "A", sc: sc, want: sc.wantA, holds: sc.docA != nil, doc: slices.Clone(sc.docA)}
	b := &end{name: "B", sc: sc, want: sc.wantB, resync: sc.resyncB, holds: sc.docB != nil, doc: slices.Clone(sc.docB)}
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
		da, db := slices.Sorted(slices.Values(a.doc)), slices.Sorted(slices.Values(b.doc))
		if !slices.Equal(da, db) {
			t.Fatalf("documents differ:\nA %v\nB %v", a.doc, b.doc)
		}
		for _, g := range append(sc.docA, sc.docB...) {
			if !slices.Contains(a.doc, g) {
				t.Fatalf("the starting commit %s was lost: %v", g, a.doc)
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
	c := fmt.Sprintf("%s%d", e.name, len(e.sent)+1)
	seq, err := e.l.Send(e.topic, []byte(c), []byte("undo "+c))
	if err != nil || seq != uint64(len(e.sent)+1) {
		t.Fatalf("%s: send %s: seq %d, %v", e.name, c, seq, err)
	}
	e.sent = append(e.sent, c)
	e.doc = append(e.doc, c)
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
		if err := e.l.SendState(ev.Topic, []byte(strings.Join(e.doc, ","))); err != nil {
			t.Fatal(err)
		}
	case StateArrived:
		e.doc = nil
		if ev.State != nil {
			e.doc = strings.Split(string(ev.State), ",")
		}
		e.waiting = false
	case CommitsArrived:
		e.arrived = append(e.arrived, fmt.Sprintf("%d:%s", ev.Seq, ev.Commit))
		if e.sc.refuse && e.r.IntN(8) == 0 {
			e.refused = append(e.refused, ev.Seq)
			if err := e.l.Refuse(ev.Topic, ev.Seq, []frame.Reason{{Code: "no", Message: "test"}}); err != nil {
				t.Fatal(err)
			}
			return
		}
		e.doc = append(e.doc, string(ev.Commit))
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
	c := e.sent[seq-1]
	if string(ev.Commit) != c || string(ev.Undo) != "undo "+c {
		t.Fatalf("%s: refusal of seq %d carries %q/%q, sent %q", e.name, seq, ev.Commit, ev.Undo, c)
	}
	i := slices.Index(e.doc, c)
	if i < 0 {
		t.Fatalf("%s: refused %s is not in %v", e.name, c, e.doc)
	}
	e.doc = slices.Delete(e.doc, i, i+1)
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
		want = append(want, fmt.Sprintf("%d:%s", i+1, o.sent[i]))
	}
	if !slices.Equal(e.arrived, want) {
		t.Fatalf("%s received %v\nfrom %s, which sent %v (covered %d)", e.name, e.arrived, o.name, want, o.covered())
	}
}
