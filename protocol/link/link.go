package link

import (
	"strings"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Defaults for a zero Config field.
const (
	DefaultWindow    = 256  // the JS link's window
	DefaultMaxTopics = 1024 // topics per link
	DefaultMaxQueued = 4096 // commits held per topic before it is live
	// DefaultMaxFrameBytes keeps a commits frame under the JS peer's 1 MiB
	// message limit, with headroom for a transport header.
	DefaultMaxFrameBytes = 1<<20 - 64
)

// Config bounds one link. A zero field takes its default, and so does a
// negative one.
type Config struct {
	// Window is how many sent commits per topic are kept so a refusal can
	// be reported with the commit and its undo.
	Window int
	// ForgetSent keeps no window: a refusal is reported without its commit
	// and undo. For an end that only counts refusals, such as a gateway,
	// whose thousands of links would each keep Window commits for nothing.
	ForgetSent bool
	// MaxTopics bounds the topics of a link: ours and the peer's, counted
	// once per name, held PeerOpened included. A peer open past it is
	// answered with fault too-many-topics; a Share past it is an error.
	MaxTopics int
	// MaxQueued bounds the commits Send holds for a topic that is not yet
	// live; past it Send fails with too-many-pending-commits.
	MaxQueued int
	// MaxFrameBytes bounds the encoded size of a commits or state frame.
	// Batching opens a new frame rather than pass it; a single commit or
	// state that cannot fit is refused with commit-too-large.
	MaxFrameBytes int
}

func (c Config) withDefaults() Config {
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.MaxTopics <= 0 {
		c.MaxTopics = DefaultMaxTopics
	}
	if c.MaxQueued <= 0 {
		c.MaxQueued = DefaultMaxQueued
	}
	if c.MaxFrameBytes <= 0 {
		c.MaxFrameBytes = DefaultMaxFrameBytes
	}
	return c
}

// Link is one end of one link. It is not safe for concurrent use.
type Link struct {
	cfg    Config
	ended  bool
	last   uint64            // the last topic number we gave out
	byName map[string]*topic // every topic, by name
	ours   map[uint64]*topic // topics we shared, by our number
	peers  map[uint64]*topic // topics the peer opened, by its number
	out    []frame.Frame
	body   int // encoded bytes of the commits in out's last frame
	events []Event

	// Memory handed back by Recycle for the frames that follow.
	spareOut     []frame.Frame
	spareCommits [][][]byte
}

// Bounds on what Recycle keeps, so a link that once sent a burst does not
// hold its memory for good: a few frames, and commit lists of up to 64.
const (
	maxSpareFrames  = 8
	maxSpareLists   = 4
	maxSpareCommits = 64
)

// New returns a link with no topics.
func New(cfg Config) *Link {
	return &Link{
		cfg:    cfg.withDefaults(),
		byName: make(map[string]*topic),
		ours:   make(map[uint64]*topic),
		peers:  make(map[uint64]*topic),
	}
}

// Flush returns the frames to send, in order, and forgets them. Consecutive
// commits for one topic share a frame, up to MaxFrameBytes. The frames hold
// the caller's commit bytes; they are not copied.
func (l *Link) Flush() []frame.Frame {
	out := l.out
	l.out, l.body = nil, 0
	return out
}

// Recycle hands back frames that Flush returned, once they are written:
// the link reuses their memory for the frames that follow, sparing a link
// that sends often an allocation a frame and one a doubling of its
// commits. The caller must not use them after.
func (l *Link) Recycle(frames []frame.Frame) {
	for i := range frames {
		if cs := frames[i].Commits; cap(cs) > 0 && cap(cs) <= maxSpareCommits && len(l.spareCommits) < maxSpareLists {
			clear(cs) // the commits are the caller's: hold none of them
			l.spareCommits = append(l.spareCommits, cs[:0])
		}
	}
	if cap(frames) <= maxSpareFrames && l.spareOut == nil {
		clear(frames)
		l.spareOut = frames[:0]
	}
}

// Events returns the events since the last call, in order, and forgets them.
func (l *Link) Events() []Event {
	ev := l.events
	l.events = nil
	return ev
}

// Closed reports whether the link has ended; every input is then ignored.
func (l *Link) Closed() bool { return l.ended }

func (l *Link) emit(e Event) { l.events = append(l.events, e) }

func (l *Link) send(f frame.Frame) {
	if l.out == nil {
		l.out, l.spareOut = l.spareOut, nil
	}
	l.out = append(l.out, f)
	l.body = 0
}

// fault sends a fault. Its text comes from the application as often as
// from us, and a frame carries only UTF-8.
func (l *Link) fault(topic uint64, r protocol.Reason, msg string) {
	l.send(frame.Frame{Kind: frame.Fault, Topic: topic,
		Reason: strings.ToValidUTF8(string(r), "\uFFFD"), Message: strings.ToValidUTF8(msg, "\uFFFD")})
}

// drop forgets t at this end without a word.
func (l *Link) drop(t *topic) {
	delete(l.byName, t.name)
	if t.ours != 0 {
		delete(l.ours, t.ours)
	}
	if t.peer != 0 {
		delete(l.peers, t.peer)
	}
}

// end forgets t and tells the application.
func (l *Link) end(t *topic, r protocol.Reason, msg string, byPeer bool) {
	l.drop(t)
	l.emit(Ended{Topic: t.ours, Name: t.name, Reason: r, Message: msg, ByPeer: byPeer})
}
