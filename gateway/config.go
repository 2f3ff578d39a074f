package gateway

import (
	"log/slog"
	"math"
	"time"

	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/gateway/requests"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/gateway/tail"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// Config configures a Server. The zero value works: an in-memory store, the
// accept-everything local policy, anonymous peers, no request-channel calls.
type Config struct {
	// Store holds every document's commit log. Nil means an in-memory store
	// (nothing survives the process).
	Store store.Store
	// Authority judges commits and opens. Nil means Policy{} (accept all).
	Authority Authority
	// Admission configures the checks before the upgrade (rate limit,
	// host, origin, identify).
	Admission admission.Config
	// Calls answers request-channel calls. Nil answers every call `missing`.
	Calls requests.Calls
	// Logger receives structured logs. Nil discards them.
	Logger *slog.Logger
	// Paths are the URL paths that accept a WebSocket upgrade.
	// Empty means "/" and "/ws" (the aweft client's two defaults).
	Paths []string

	// MaxMessageBytes is the largest WebSocket message read. 0 means 1 MiB,
	// the aweft server's default; a larger message closes the socket (1009).
	MaxMessageBytes int64
	// MaxPendingBytes bounds the bytes queued toward one connection. A
	// connection past it is ended with the fault slow-consumer. 0 means 4 MiB.
	MaxPendingBytes int
	// TailCommits and TailBytes bound each document's tail: the durable
	// commits kept, encoded, for its links to read from their own cursors
	// (decision 031). A link whose cursor falls off it, or whose lag passes
	// MaxPendingBytes, is ended with slow-consumer. 0 means 16,384 commits
	// and 4 MiB. They bound what readers that fall behind hold: what every
	// link has read is let go.
	TailCommits int
	TailBytes   int
	// MaxFramesInFlight bounds the commits frames one connection may have
	// waiting for verdicts; past it the gateway stops reading that socket.
	// 0 means 64.
	MaxFramesInFlight int
	// MaxTopicsPerLink bounds topics on one link. 0 means 1024.
	MaxTopicsPerLink int
	// MaxPendingPerDocument bounds commits waiting for a verdict or for the
	// store on one document; past it commits are refused with
	// too-many-pending-commits. 0 means 8192.
	MaxPendingPerDocument int
	// MaxDocuments bounds the documents in memory at once; an open past it
	// is answered with the fault too-many-documents. 0 means 100,000.
	MaxDocuments int
	// MaxInFlightVerdicts bounds questions to the authority per document.
	// 0 means 256.
	MaxInFlightVerdicts int
	// JudgeTimeout bounds one verdict. 0 means 5s.
	JudgeTimeout time.Duration
	// WriteTimeout bounds one socket write. 0 means 10s.
	WriteTimeout time.Duration
	// PingInterval is how often an idle connection is pinged; a peer that
	// does not answer within PingTimeout is ended. 0 means 30s; negative
	// turns pings off.
	PingInterval time.Duration
	// PingTimeout: 0 means 15s.
	PingTimeout time.Duration
	// IdleUnload is how long a document nobody has open stays in memory.
	// 0 means 1 minute.
	IdleUnload time.Duration
	// SnapshotEvery is how many commits pass between stored snapshots.
	// 0 means 1000.
	SnapshotEvery int
	// Compression enables permessage-deflate with context takeover.
	Compression bool
	// DocumentLimits bounds each document's size.
	DocumentLimits document.Limits
	// CommitLimits bounds each commit a peer or backend sends. Its
	// MaxCommitBytes is at most MaxMessageBytes less a frame's overhead
	// (the default), so every accepted commit can be delivered whole.
	CommitLimits commit.Limits
	// MaxDocumentBytes bounds a document's encoded state; a commit or
	// state that would pass it is refused with document-too-large. It is at
	// most MaxMessageBytes less a frame's overhead (the default), so every
	// joiner can be sent the state in one message.
	MaxDocumentBytes int
	// StateTimeout bounds the wait for a creating peer's state; past it
	// the creation is abandoned (state-timeout) and joiners are answered.
	// 0 means 10s.
	StateTimeout time.Duration
	// DrainSpread spreads the ends of the links at shutdown over this long,
	// so their clients do not all reconnect at once; 0 ends them together.
	// It comes out of the shutdown's deadline.
	DrainSpread time.Duration
	// MaxOpensPerSecond bounds the opens one link may make per second
	// (with a burst of MaxTopicsPerLink); past it an open is answered with
	// the fault too-many-opens. 0 means 100; negative turns it off.
	MaxOpensPerSecond float64
	// LostRaceWait bounds how long a node whose append lost the race for
	// its cursor (a log shared with other nodes) waits for its follow to
	// bring the winner's records before it reads them from the log
	// instead. 0 means 200ms.
	LostRaceWait time.Duration
	// FanoutMembers and FanoutInterval: a document wakes its links at
	// most once per FanoutInterval × links / FanoutMembers (10µs a link by
	// default), and once per FanoutInterval from FanoutMembers links up,
	// rather than after every append, so each link's write carries every
	// commit of that span. A wait under a millisecond is none: a document
	// of fewer than 100 links wakes them after every append. 0 means 2000
	// and 20ms; a negative FanoutMembers wakes every link after every
	// append (decision 036).
	FanoutMembers  int
	FanoutInterval time.Duration
	// FanoutChunk bounds the links one step of a pass (per append or per
	// interval) wakes; the next step comes once those have run, after the
	// hub took what arrived meanwhile. Thousands woken at once filled the
	// run queues, and a commit on its way in waited behind them all
	// (decision 041). 0 means 64; negative wakes them all at once.
	FanoutChunk int
}

// minPassWait: a shorter wait is none. Below it (under 100 links with the
// defaults) a pass per append costs less than what a wait would save.
const minPassWait = time.Millisecond

// passWait is how long a document of members links lets an append wait for
// the pass that wakes them: in proportion to its links up to
// FanoutMembers, where it is FanoutInterval; 0 is a pass per append.
func (c *Config) passWait(members int) time.Duration {
	if c.FanoutMembers <= 0 {
		return 0
	}
	w := c.FanoutInterval
	if members < c.FanoutMembers {
		w = time.Duration(int64(w) * int64(members) / int64(c.FanoutMembers))
	}
	if w < minPassWait {
		return 0
	}
	return w
}

// Defaults for zero Config fields, exported so a command line can show them.
const (
	DefaultMaxMessageBytes       = 1 << 20
	DefaultMaxPendingBytes       = 4 << 20
	DefaultMaxFramesInFlight     = 64
	DefaultTailCommits           = tail.DefaultMaxCommits
	DefaultMaxTopicsPerLink      = 1024
	DefaultMaxPendingPerDocument = 8192
	DefaultMaxInFlightVerdicts   = 256
	DefaultMaxDocuments          = 100_000
	DefaultSnapshotEvery         = 1000
	DefaultJudgeTimeout          = 5 * time.Second
	DefaultWriteTimeout          = 10 * time.Second
	DefaultPingInterval          = 30 * time.Second
	DefaultPingTimeout           = 15 * time.Second
	DefaultIdleUnload            = time.Minute
	DefaultStateTimeout          = 10 * time.Second
	DefaultMaxOpensPerSecond     = 100
	DefaultLostRaceWait          = 200 * time.Millisecond
	DefaultFanoutMembers         = 2000
	DefaultFanoutInterval        = 20 * time.Millisecond
	DefaultFanoutChunk           = 64
	// DefaultMaxCommitBytes is the largest commit that fits, whole, in one
	// frame of DefaultMaxMessageBytes.
	DefaultMaxCommitBytes = DefaultMaxMessageBytes - frameOverhead
	// frameOverhead is what a commits frame carrying one commit adds to
	// it: kind, topic, first, the list and the byte string heads.
	frameOverhead = 64
)

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	def(&c.MaxPendingBytes, DefaultMaxPendingBytes)
	def(&c.TailCommits, DefaultTailCommits)
	def(&c.TailBytes, c.MaxPendingBytes)
	def(&c.MaxFramesInFlight, DefaultMaxFramesInFlight)
	def(&c.MaxTopicsPerLink, DefaultMaxTopicsPerLink)
	def(&c.MaxPendingPerDocument, DefaultMaxPendingPerDocument)
	def(&c.MaxInFlightVerdicts, DefaultMaxInFlightVerdicts)
	def(&c.MaxDocuments, DefaultMaxDocuments)
	def(&c.SnapshotEvery, DefaultSnapshotEvery)
	defDur(&c.JudgeTimeout, DefaultJudgeTimeout)
	defDur(&c.WriteTimeout, DefaultWriteTimeout)
	defDur(&c.PingInterval, DefaultPingInterval)
	defDur(&c.PingTimeout, DefaultPingTimeout)
	defDur(&c.IdleUnload, DefaultIdleUnload)
	// Every commit the gateway accepts must fit, whole, in the one frame
	// that delivers it to a peer with the same message limit; so a commit
	// is bounded by the message limit less a frame's overhead.
	if lim := int(c.MaxMessageBytes) - frameOverhead; c.CommitLimits.MaxCommitBytes <= 0 || c.CommitLimits.MaxCommitBytes > lim {
		c.CommitLimits.MaxCommitBytes = lim
	}
	if lim := int(c.MaxMessageBytes) - frameOverhead; c.MaxDocumentBytes <= 0 || c.MaxDocumentBytes > lim {
		c.MaxDocumentBytes = lim
	}
	defDur(&c.StateTimeout, DefaultStateTimeout)
	defDur(&c.LostRaceWait, DefaultLostRaceWait)
	defDur(&c.FanoutInterval, DefaultFanoutInterval)
	if c.FanoutMembers == 0 {
		c.FanoutMembers = DefaultFanoutMembers
	}
	switch {
	case c.FanoutChunk == 0:
		c.FanoutChunk = DefaultFanoutChunk
	case c.FanoutChunk < 0:
		c.FanoutChunk = math.MaxInt
	}
	if c.MaxOpensPerSecond == 0 {
		c.MaxOpensPerSecond = DefaultMaxOpensPerSecond
	}
	if len(c.Paths) == 0 {
		c.Paths = []string{"/", "/ws"}
	}
	if c.Authority == nil {
		c.Authority = Policy{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}
