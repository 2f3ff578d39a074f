package link

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/frame"
)

// FuzzStep drives a link with calls and peer frames read from the fuzz
// bytes, and checks that it never panics, that every frame it sends is one
// the codec writes and reads back as itself, and that its outputs keep the
// link's promises.
func FuzzStep(f *testing.F) {
	f.Add([]byte{0, 1, 0, 9, 1, 2, 0})
	f.Add([]byte{9, 1, 0, 1, 0, 0, 2, 1, 5, 9, 1, 1, 0, 0, 2, 1, 1, 3, 9, 2, 1, 2})
	f.Add([]byte{9, 0, 1, 0, 3, 0, 0, 3, 9, 0, 1, 1, 3, 9, 1, 1, 1, 0, 0, 4, 2, 1})
	f.Add([]byte{0, 0, 0, 6, 9, 0, 0, 1, 4, 9, 5, 0, 1, 2, 7, 1, 9, 3, 1, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		c := newChecker(t, Config{Window: 2, MaxTopics: 3, MaxQueued: 3, MaxFrameBytes: 40})
		in := input{data: data}
		for !in.done() {
			c.step(&in)
			c.check()
		}
		c.l.Close()
		c.check()
		for n, ended := range c.shared {
			if !ended {
				t.Fatalf("topic %d never ended", n)
			}
		}
	})
}

// input reads small choices from the fuzz bytes, 0 once they run out.
type input struct {
	data []byte
	i    int
}

func (in *input) done() bool { return in.i >= len(in.data) }

func (in *input) pick(n int) int {
	if in.done() {
		return 0
	}
	in.i++
	return int(in.data[in.i-1]) % n
}

var (
	fuzzNames = []string{"a", "b", "c", "d"}
	fuzzRoots = []*frame.Root{nil, {ID: [12]byte{1}}, {ID: [12]byte{1}, Kind: 2}, {ID: [12]byte{2}}, {ID: [12]byte{3}, Kind: 7}}
	fuzzNums  = []uint64{0, 1, 2, 3, 4, 5, 1 << 20, frame.MaxNumber, frame.MaxNumber + 1}
	fuzzBytes = [][]byte{nil, {}, []byte("c"), []byte("c2"), make([]byte, 30), make([]byte, 60)}
)

func (in *input) name() string      { return fuzzNames[in.pick(len(fuzzNames))] }
func (in *input) root() *frame.Root { return copyRoot(fuzzRoots[in.pick(len(fuzzRoots))]) }
func (in *input) num() uint64       { return fuzzNums[in.pick(len(fuzzNums))] }
func (in *input) bytes() []byte     { return fuzzBytes[in.pick(len(fuzzBytes))] }
func (in *input) flag() bool        { return in.pick(2) == 1 }
func (in *input) text() string      { return []string{"", "x", "\xff"}[in.pick(3)] }
func (in *input) reasons() []frame.Reason {
	rs := make([]frame.Reason, in.pick(3))
	for i := range rs {
		rs[i] = frame.Reason{Code: in.text(), Message: in.text()}
	}
	return rs
}

// checker holds one link and what its outputs have promised so far.
type checker struct {
	t      *testing.T
	l      *Link
	shared map[uint64]bool // our topic numbers, and whether they ended
	live   map[uint64]bool
	wanted map[uint64]bool // StateWanted emitted and not yet answered
	seq    map[uint64]uint64
	over   bool
	turn   int // every other flush's frames are recycled, as the gateway does
}

func newChecker(t *testing.T, cfg Config) *checker {
	return &checker{t: t, l: New(cfg), shared: map[uint64]bool{}, live: map[uint64]bool{},
		wanted: map[uint64]bool{}, seq: map[uint64]uint64{}}
}

func (c *checker) step(in *input) {
	l := c.l
	switch in.pick(10) {
	case 0:
		if n, err := l.Share(in.name(), in.root(), in.flag()); err == nil {
			if _, seen := c.shared[n]; seen || n == 0 {
				c.t.Fatalf("Share gave topic %d again", n)
			}
			c.shared[n] = false
		}
	case 1:
		_, _ = l.Send(in.num(), in.bytes(), nil)
	case 2:
		topic := in.num()
		if err := l.SendState(topic, in.bytes()); err == nil {
			if !c.wanted[topic] {
				c.t.Fatalf("SendState on topic %d was taken unasked", topic)
			}
			c.wanted[topic] = false
		}
	case 3:
		_ = l.Refuse(in.num(), in.num(), in.reasons())
	case 4:
		_ = l.Resync(in.num())
	case 5:
		_ = l.Leave(in.num())
	case 6:
		_ = l.Decline(in.name())
	case 7:
		switch in.pick(8) {
		case 0:
			l.BadFrame(in.num(), in.text())
		case 1:
			l.FaultLink(protocol.Reason(in.text()), in.text())
		case 2:
			l.Close()
		case 3:
			_ = l.DeclineWith(in.name(), protocol.Reason(in.text()), in.text())
		case 4:
			_ = l.Fault(in.num(), protocol.Reason(in.text()), in.text())
		}
	default:
		f := in.frame()
		if _, err := frame.Encode(f); err != nil && malformed(f) == "" {
			c.t.Fatalf("the link takes a frame the codec refuses (%v): %+v", err, f)
		}
		l.Receive(f)
	}
}

// frame builds a peer frame, well-formed or not.
func (in *input) frame() frame.Frame {
	f := frame.Frame{Kind: frame.Kind(in.pick(7)), Topic: in.num()}
	switch f.Kind {
	case frame.Open:
		f.Name, f.Root, f.Want = in.name(), in.root(), in.flag()
	case frame.State:
		f.State = in.bytes()
	case frame.Commits:
		f.First = in.num()
		for n := in.pick(4); n > 0; n-- {
			f.Commits = append(f.Commits, in.bytes())
		}
	case frame.Refused:
		f.Seq, f.Reasons = in.num(), in.reasons()
	case frame.Fault:
		f.Topic = []uint64{0, 1, 2, 3}[in.pick(4)]
		f.Reason, f.Message = in.text(), in.text()
	}
	return f
}

func (c *checker) check() {
	frames, events := c.l.Flush(), c.l.Events()
	if c.over && len(frames)+len(events) > 0 {
		c.t.Fatalf("outputs after the link ended: %v %v", frames, events)
	}
	for _, ev := range events {
		c.event(ev)
	}
	for i, f := range frames {
		if err := c.frame(f, i == len(frames)-1); err != nil {
			c.t.Fatalf("%s: %+v", err, f)
		}
	}
	if c.turn++; c.turn%2 == 0 {
		c.l.Recycle(frames)
	}
}

func (c *checker) event(ev Event) {
	switch ev := ev.(type) {
	case Live:
		c.live[ev.Topic] = true
	case StateWanted:
		if !c.live[ev.Topic] || c.wanted[ev.Topic] {
			c.t.Fatalf("StateWanted %d: live %v, already wanted %v", ev.Topic, c.live[ev.Topic], c.wanted[ev.Topic])
		}
		c.wanted[ev.Topic] = true
	case CommitsArrived, StateArrived, PeerRefused:
		if topic := topicOf(ev); !c.live[topic] {
			c.t.Fatalf("%T on topic %d, which is not live", ev, topic)
		}
	case Ended:
		if ev.Topic == 0 {
			return
		}
		if ended, ok := c.shared[ev.Topic]; !ok || ended {
			c.t.Fatalf("Ended %d: shared %v, already ended %v", ev.Topic, ok, ended)
		}
		c.shared[ev.Topic] = true
		c.live[ev.Topic], c.wanted[ev.Topic] = false, false
	case LinkEnded:
		c.over = true
	}
}

func topicOf(ev Event) uint64 {
	switch ev := ev.(type) {
	case CommitsArrived:
		return ev.Topic
	case StateArrived:
		return ev.Topic
	case PeerRefused:
		return ev.Topic
	}
	return 0
}

// frame checks one frame we send: the codec takes it and gives it back,
// and it keeps the link's rules.
func (c *checker) frame(f frame.Frame, last bool) error {
	b, err := frame.Encode(f)
	if err != nil {
		return err
	}
	if len(b) > 40 && f.Kind != frame.Open && f.Kind != frame.Refused && f.Kind != frame.Fault {
		return fmt.Errorf("%d bytes, over MaxFrameBytes", len(b))
	}
	if g, err := frame.Decode(b); err != nil || !reflect.DeepEqual(f, g) {
		return fmt.Errorf("re-decodes as %+v, %v", g, err)
	}
	switch f.Kind {
	case frame.Fault:
		if f.Topic == 0 && !(last && c.over) {
			return fmt.Errorf("a link fault that does not end the link")
		}
	case frame.Commits:
		if !c.live[f.Topic] {
			return fmt.Errorf("commits on topic %d, which is not live", f.Topic)
		}
		if f.First <= c.seq[f.Topic] {
			return fmt.Errorf("commits from %d after %d", f.First, c.seq[f.Topic])
		}
		c.seq[f.Topic] = f.First + uint64(len(f.Commits)) - 1
	case frame.State, frame.Refused:
		if !c.live[f.Topic] {
			return fmt.Errorf("a %s on topic %d, which is not live", f.Kind, f.Topic)
		}
	case frame.Open, frame.Leave:
		if _, ok := c.shared[f.Topic]; !ok {
			return fmt.Errorf("a %s names topic %d, which we never shared", f.Kind, f.Topic)
		}
	}
	return nil
}
