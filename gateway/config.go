package gateway

import (
	"log/slog"
	"time"

	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/gateway/requests"
	"github.com/weftgate/weftgate/gateway/store"
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
	// origin, identify).
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
	// CommitLimits bounds each commit a peer sends.
	CommitLimits commit.Limits
}

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
		c.MaxMessageBytes = 1 << 20
	}
	def(&c.MaxPendingBytes, 4<<20)
	def(&c.MaxFramesInFlight, 64)
	def(&c.MaxTopicsPerLink, 1024)
	def(&c.MaxPendingPerDocument, 8192)
	def(&c.MaxInFlightVerdicts, 256)
	def(&c.SnapshotEvery, 1000)
	defDur(&c.JudgeTimeout, 5*time.Second)
	defDur(&c.WriteTimeout, 10*time.Second)
	defDur(&c.PingInterval, 30*time.Second)
	defDur(&c.PingTimeout, 15*time.Second)
	defDur(&c.IdleUnload, time.Minute)
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
