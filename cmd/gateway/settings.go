package main

import (
	"flag"
	"time"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/internal/gcfloor"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// settings is every knob of the binary. Each field is one flag (and one
// WEFTGATE_* variable); the zero value is never used, defaults come from
// bindFlags.
type settings struct {
	Config    string
	WSAddr    string
	WSPaths   list
	AdminAddr string
	Pprof     bool
	GRPCAddr  string
	ReadyFile string
	Demo      string
	Inspect   bool

	TLSCert      string
	TLSKey       string
	GRPCTLSCert  string
	GRPCTLSKey   string
	GRPCClientCA string
	GRPCToken    string
	// Bounds of the gRPC listener before any call is authenticated.
	GRPCMaxConnections int
	GRPCMaxStreams     int
	// Exposure on purpose: off loopback without authentication.
	InsecureGRPC  bool
	InsecureAdmin bool
	// The bridge: what answers when no backend claims a document.
	AuthorityFallback string
	QuestionTimeout   time.Duration

	Store                  string
	DataDir                string
	NatsURL                string
	NatsCreds              string
	NatsTLSCA              string
	NatsReplicas           int
	StoreRetain            int
	StoreQueueLength       int
	StoreBatchRecords      int
	StoreBatchBytes        int
	StoreCheckpointRecords int
	StoreCheckpointBytes   int
	StoreMaxFileBytes      int
	StoreMmapBytes         int
	StoreProbeInterval     time.Duration

	ReadOnly bool

	RateLimit      int
	RateWindow     time.Duration
	RateAddresses  int
	AllowedOrigins list
	AllowedHosts   list
	TrustProxy     bool

	MaxMessageBytes       int64
	MaxPendingBytes       int
	TailCommits           int
	FanoutMembers         int
	FanoutInterval        time.Duration
	FanoutChunk           int
	MaxFramesInFlight     int
	MaxTopicsPerLink      int
	MaxPendingPerDocument int
	MaxDocuments          int
	MaxInFlightVerdicts   int
	MaxObservables        int
	MaxSlots              int
	MaxCommitBytes        int
	MaxDeltas             int
	MaxDocumentBytes      int
	MaxOpensPerSecond     int
	StateTimeout          time.Duration
	JudgeTimeout          time.Duration
	WriteTimeout          time.Duration
	PingInterval          time.Duration
	PingTimeout           time.Duration
	IdleUnload            time.Duration
	SnapshotEvery         int
	Compression           bool

	DrainTimeout time.Duration
	DrainSpread  time.Duration
	GCFloor      int64
	LogLevel     string
	LogFormat    string
}

// secret names the flags whose values are never printed or logged.
var secret = map[string]bool{"grpc-token": true}

// Defaults that belong to the binary alone (the others come from the
// packages they configure).
const (
	defaultWSAddr       = "127.0.0.1:8080"
	defaultGRPCAddr     = "127.0.0.1:9090"
	defaultDataDir      = "data"
	defaultDrainTimeout = 30 * time.Second
	defaultDrainSpread  = time.Second
	// defaultGRPCMaxConnections leaves room for many backends, each with a
	// connection or two, while bounding what unauthenticated callers hold.
	defaultGRPCMaxConnections = 256
)

// bindFlags defines every setting on fs, bound to s, with its default.
func bindFlags(fs *flag.FlagSet, s *settings) {
	str := fs.StringVar
	dur := fs.DurationVar
	num := fs.IntVar

	str(&s.Config, "config", "", "YAML `file` of settings, keyed by flag name; flags and the environment override it")
	str(&s.WSAddr, "ws-addr", defaultWSAddr, "`address` of the WebSocket listener (port 0 picks a free one)")
	s.WSPaths = list{"/", "/ws"}
	fs.Var(&s.WSPaths, "ws-paths", "comma-separated URL `paths` that accept the aweft WebSocket")
	str(&s.AdminAddr, "admin-addr", "", "`address` of a separate listener for /healthz, /readyz, /metrics, /status and /documents/{name} (empty: the first four on the WebSocket listener)")
	fs.BoolVar(&s.Pprof, "pprof", false, "serve Go's profiles at /debug/pprof/ on the admin listener (needs -admin-addr)")
	str(&s.GRPCAddr, "grpc-addr", defaultGRPCAddr, "`address` of the gRPC listener for backends")
	str(&s.Demo, "demo", demoAuto, "serve the shared to-do board at /demo: auto (only when -ws-addr is loopback), on or off")
	fs.BoolVar(&s.Inspect, "inspect", true, "serve the read-only inspector at /inspect: on the admin listener when -admin-addr is set, else only when -ws-addr is loopback")
	str(&s.ReadyFile, "ready-file", "", "`file` to write the bound addresses to (JSON) once listening")

	str(&s.TLSCert, "tls-cert", "", "PEM certificate `file` for the WebSocket (and admin) listener; with -tls-key turns TLS on")
	str(&s.TLSKey, "tls-key", "", "PEM private key `file` for -tls-cert")
	str(&s.GRPCTLSCert, "grpc-tls-cert", "", "PEM certificate `file` for the gRPC listener; with -grpc-tls-key turns TLS on")
	str(&s.GRPCTLSKey, "grpc-tls-key", "", "PEM private key `file` for -grpc-tls-cert")
	str(&s.GRPCClientCA, "grpc-client-ca", "", "PEM CA `file`: gRPC clients must present a certificate it signed (mutual TLS)")
	str(&s.AuthorityFallback, "authority-fallback", "open", "what answers a question no backend claims: open (accept, as a standalone gateway) or closed (refuse with no-authority)")
	dur(&s.QuestionTimeout, "question-timeout", 2*time.Second, "how long one backend has to answer a question before it is asked of the next (times the attempts, keep it under -judge-timeout)")
	num(&s.GRPCMaxConnections, "grpc-max-connections", defaultGRPCMaxConnections, "gRPC connections open at once; more wait to be accepted until one closes")
	num(&s.GRPCMaxStreams, "grpc-max-streams", bridge.DefaultMaxConcurrentStreams, "gRPC calls open at once on one connection; a client queues more until one ends")
	str(&s.GRPCToken, "grpc-token", "", "bearer `token` backends must present on gRPC (prefer the environment variable; never logged)")
	fs.BoolVar(&s.InsecureGRPC, "insecure-grpc", false, "allow -grpc-addr off loopback with neither -grpc-token nor -grpc-client-ca (anyone who reaches it can read and write every document)")
	fs.BoolVar(&s.InsecureAdmin, "insecure-admin", false, "allow /status and /metrics (and -pprof) on an address off loopback, where they list every document to anyone who reaches it")

	str(&s.Store, "store", storeBolt, "`kind` of store: bolt (durable, in -data-dir), memory (nothing survives) or nats (JetStream at -nats-url; -nats-url alone implies it)")
	str(&s.DataDir, "data-dir", defaultDataDir, "`directory` of the embedded store (created if missing)")
	str(&s.NatsURL, "nats-url", "", "NATS server `urls`, comma-separated, holding the document logs in JetStream; nodes with the same urls act as one gateway (see Several nodes)")
	str(&s.NatsCreds, "nats-creds", "", "NATS credentials `file` (user JWT and NKey seed)")
	str(&s.NatsTLSCA, "nats-tls-ca", "", "PEM `file` of the CAs that sign the NATS servers' certificates (the system's when empty)")
	num(&s.NatsReplicas, "nats-replicas", 1, "replicas of the JetStream stream, KV bucket and object store: 1, or 3 to survive losing a server")
	num(&s.StoreRetain, "store-retain", store.DefaultRetain, "records kept behind the newest snapshot for resuming subscribers (0 keeps all)")
	num(&s.StoreQueueLength, "store-queue-length", store.DefaultQueueLength, "writes waiting for the store writer before callers block")
	num(&s.StoreBatchRecords, "store-batch-records", store.DefaultBatchRecords, "records in one group commit")
	num(&s.StoreBatchBytes, "store-batch-bytes", store.DefaultBatchBytes, "bytes in one group commit")
	num(&s.StoreCheckpointRecords, "store-checkpoint-records", store.DefaultCheckpointRecords, "write-ahead log records before a checkpoint")
	num(&s.StoreCheckpointBytes, "store-checkpoint-bytes", store.DefaultCheckpointBytes, "write-ahead log bytes before a checkpoint")
	num(&s.StoreMaxFileBytes, "store-max-file-bytes", 0, "cap on the database file; reaching it refuses writes as a full disk would (0: no cap)")
	num(&s.StoreMmapBytes, "store-mmap-bytes", store.DefaultMmapBytes, "initial memory map of the database file")
	dur(&s.StoreProbeInterval, "store-probe-interval", store.DefaultProbeInterval, "how often a failed store tries a probe write")

	fs.BoolVar(&s.ReadOnly, "read-only", false, "refuse every commit with read-only (the local policy; no backend needed)")

	num(&s.RateLimit, "rate-limit", admission.DefaultLimit, "handshakes per address per -rate-window (0 turns the limit off)")
	dur(&s.RateWindow, "rate-window", admission.DefaultWindow, "window of -rate-limit")
	num(&s.RateAddresses, "rate-max-addresses", admission.DefaultMaxAddresses, "addresses the rate limiter tracks (least recently seen forgotten first)")
	fs.Var(&s.AllowedOrigins, "allowed-origins", "comma-separated `origins` allowed besides the request's own host (\"any\" turns the Origin rule off)")
	fs.Var(&s.AllowedHosts, "allowed-hosts", "comma-separated host `names` a handshake may name besides loopback ones when -ws-addr is loopback, against DNS rebinding (\"any\" turns the Host rule off)")
	fs.BoolVar(&s.TrustProxy, "trust-proxy", false, "take the peer address from X-Forwarded-For and TLS from X-Forwarded-Proto (only behind a proxy that sets them)")

	fs.Int64Var(&s.MaxMessageBytes, "max-message-bytes", 1<<20, "largest WebSocket message read; larger closes the socket with 1009")
	num(&s.MaxPendingBytes, "max-pending-bytes", 4<<20, "bytes queued toward one connection, or one of its documents' commits it has not read yet, before it is ended with slow-consumer")
	num(&s.TailCommits, "tail-commits", gateway.DefaultTailCommits, "durable commits each document keeps in memory for its links and subscribers to read; a link that falls further behind is ended with slow-consumer")
	num(&s.FanoutMembers, "fanout-members", gateway.DefaultFanoutMembers, "a document with at least this many links wakes them once per -fanout-interval rather than after every append, so each write to a link carries every commit of that span; a smaller one waits in proportion to its links (10µs a link by default), none under 1ms (0: always after every append)")
	dur(&s.FanoutInterval, "fanout-interval", gateway.DefaultFanoutInterval, "how often a document with -fanout-members links or more wakes them; a smaller one, in proportion")
	num(&s.FanoutChunk, "fanout-chunk", gateway.DefaultFanoutChunk, "a document wakes its links this many at a time, the next ones once those have run, so a commit on its way in does not wait behind thousands of woken links (0: all at once)")
	num(&s.MaxFramesInFlight, "max-frames-in-flight", 64, "commits frames one connection may have waiting for verdicts before reading pauses")
	num(&s.MaxTopicsPerLink, "max-topics-per-link", 1024, "topics (open documents) on one link")
	num(&s.MaxDocuments, "max-documents", gateway.DefaultMaxDocuments, "documents in memory at once; an open past it gets the fault too-many-documents")
	num(&s.MaxPendingPerDocument, "max-pending-per-document", 8192, "commits waiting on one document before refusing with too-many-pending-commits")
	num(&s.MaxInFlightVerdicts, "max-in-flight-verdicts", 256, "questions to the authority in flight per document")
	num(&s.MaxObservables, "max-observables", document.DefaultMaxObservables, "observables one document may hold")
	num(&s.MaxSlots, "max-slots", document.DefaultMaxSlots, "slots one document may hold")
	num(&s.MaxCommitBytes, "max-commit-bytes", gateway.DefaultMaxCommitBytes, "bytes of one commit a peer sends (commit-too-large beyond); at most max-message-bytes less 64, so it fits the frame that delivers it")
	num(&s.MaxDeltas, "max-deltas", commit.DefaultMaxDeltas, "deltas in one commit a peer sends (too-many-deltas beyond)")
	num(&s.MaxDocumentBytes, "max-document-bytes", gateway.DefaultMaxCommitBytes, "bytes of one document's encoded state (document-too-large beyond); at most max-message-bytes less 64, so a joiner receives it in one message")
	num(&s.MaxOpensPerSecond, "max-opens-per-second", gateway.DefaultMaxOpensPerSecond, "documents one link may open per second, with a burst of max-topics-per-link (too-many-opens beyond; 0 turns the bound off)")
	dur(&s.StateTimeout, "state-timeout", gateway.DefaultStateTimeout, "time a peer creating a document has to send its state before the creation is abandoned with state-timeout")
	dur(&s.JudgeTimeout, "judge-timeout", 5*time.Second, "time the authority has for one verdict before the commit is refused with authority-timeout")
	dur(&s.WriteTimeout, "write-timeout", 10*time.Second, "time one socket write may take")
	dur(&s.PingInterval, "ping-interval", 30*time.Second, "how often an idle connection is pinged (0 turns pings off)")
	dur(&s.PingTimeout, "ping-timeout", 15*time.Second, "time a peer has to answer a ping before it is ended")
	dur(&s.IdleUnload, "idle-unload", time.Minute, "how long a document nobody has open stays in memory")
	num(&s.SnapshotEvery, "snapshot-every", 1000, "commits between stored snapshots of a document")
	fs.BoolVar(&s.Compression, "compression", false, "offer permessage-deflate with context takeover")

	dur(&s.DrainTimeout, "drain-timeout", defaultDrainTimeout, "deadline for the drain on SIGTERM or SIGINT; past it the process exits 1")
	dur(&s.DrainSpread, "drain-spread", defaultDrainSpread, "spread the links' ends at a drain over this long, so their clients do not all reconnect at once (0 ends them together; part of -drain-timeout)")
	fs.Int64Var(&s.GCFloor, "gc-floor", gcfloor.DefaultFloor, "heap `bytes` the collector lets a small heap grow to between collections (0: Go's default; ignored when GOGC is set)")
	str(&s.LogLevel, "log-level", "info", "log `level`: debug, info, warn or error")
	str(&s.LogFormat, "log-format", "text", "log `format`: text or json")
}

const (
	storeBolt   = "bolt"
	storeMemory = "memory"
	storeNats   = "nats"
)
