package bridge

import (
	"log/slog"
	"strings"
	"time"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/protocol/commit"
)

// Policy is what answers a question nobody answered: PolicyOpen accepts,
// allows and admits (the standalone gateway's behaviour); PolicyClosed
// refuses with no-authority when nobody claims the name and
// authority-timeout when claimants did not answer in time.
type Policy string

const (
	PolicyOpen   Policy = "open"
	PolicyClosed Policy = "closed"
)

// FallbackRule sets the policy for names that start with Prefix (or equal
// Name when Exact). The most specific rule wins, as claims do.
type FallbackRule struct {
	Prefix string
	Exact  bool
	Policy Policy
}

// Defaults for zero Config fields.
const (
	DefaultQuestionTimeout        = 2 * time.Second
	DefaultMaxQuestionTimeout     = 30 * time.Second
	DefaultMaxAttempts            = 2
	DefaultInFlightPerStream      = 256
	DefaultMaxInFlightPerStream   = 4096
	DefaultMaxHeldPerStream       = 4096
	DefaultMaxInFlightPerDocument = 256
	DefaultMaxClaimsPerStream     = 1024
	DefaultMaxPendingWrites       = 256
	DefaultMaxMessageBytes        = 16 << 20
	DefaultMaxConcurrentStreams   = 256
	DefaultMaxSendQueue           = 4096
	DefaultMaxPatternDocuments    = 1024
	DefaultMaxBatchQuestions      = 64
	// MaxPatternBytes bounds a claim's or a subscription's pattern.
	MaxPatternBytes = 1024
	// MaxBackendBytes bounds Hello.backend and a unary write's writer.
	MaxBackendBytes = 128
	// MaxLabelBytes bounds a write's label.
	MaxLabelBytes = 128
	// MaxResumeEntries bounds SubscribeRequest.resume.
	MaxResumeEntries = 10000
	// DefaultPageSize and MaxPageSize bound ListDocuments pages.
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// Config configures a Server. Only Gateway is required (it may also be
// given later with Attach, since the gateway needs the bridge as its
// Authority first).
type Config struct {
	Gateway *gateway.Server
	// Store, when set, is the gateway's store: ListDocuments then lists
	// documents that are not in memory too.
	Store store.Store
	// Logger receives the bridge's and every RPC's logs. Nil discards.
	Logger *slog.Logger
	// Node names this gateway in Welcome.
	Node string
	// Relay, when set, carries the questions no backend of this node
	// claims to another node's backends (several nodes, decision 034).
	Relay Relay

	// Tokens are the bearer tokens backends may present; empty means no
	// authentication.
	Tokens []string

	// Policy answers what no claimant answered, unless a rule in Fallback
	// is more specific. Empty means PolicyOpen.
	Policy   Policy
	Fallback []FallbackRule
	// Identifier identifies peers at the handshake when no backend claims
	// their URL path. Nil identifies everyone as anonymous.
	Identifier admission.Identifier
	// CommitLimits bound commits backends send; zero fields are the
	// protocol defaults. Keep them equal to the gateway's.
	CommitLimits commit.Limits

	// QuestionTimeout is a claim's question timeout when it asks for none;
	// MaxQuestionTimeout caps what a claim may ask for.
	QuestionTimeout    time.Duration
	MaxQuestionTimeout time.Duration
	// MaxAttempts bounds how many claimants one question is asked of before
	// the policy answers it. Keep QuestionTimeout*MaxAttempts below the
	// gateway's JudgeTimeout, or the gateway gives up first.
	MaxAttempts int
	// InFlightPerStream is a stream's in-flight bound when Hello asks for
	// none; MaxInFlightPerStream caps what Hello may ask for.
	InFlightPerStream    int
	MaxInFlightPerStream int
	// MaxHeldPerStream bounds questions waiting for in-flight room on one
	// stream; past it the question goes to the next claimant.
	MaxHeldPerStream int
	// MaxInFlightPerDocument bounds unanswered questions about one
	// document across every stream; past it they are refused
	// authority-busy.
	MaxInFlightPerDocument int
	MaxClaimsPerStream     int
	MaxPendingWrites       int
	// MaxRecvMessageBytes and MaxSendMessageBytes bound one gRPC message.
	MaxRecvMessageBytes int
	MaxSendMessageBytes int
	// MaxConcurrentStreams bounds the calls one connection has open at
	// once (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS); a client queues the
	// rest until one ends. Each may hold MaxRecvMessageBytes.
	MaxConcurrentStreams uint32
	// MaxSendQueue bounds the messages waiting for one stream's sender; a
	// backend that does not read past it is ended with RESOURCE_EXHAUSTED.
	MaxSendQueue int
	// MaxPatternDocuments bounds the documents one pattern subscription
	// follows at once.
	MaxPatternDocuments int
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Policy == "" {
		c.Policy = PolicyOpen
	}
	if c.Identifier == nil {
		c.Identifier = admission.Anonymous{}
	}
	defDur(&c.QuestionTimeout, DefaultQuestionTimeout)
	defDur(&c.MaxQuestionTimeout, DefaultMaxQuestionTimeout)
	c.QuestionTimeout = min(c.QuestionTimeout, c.MaxQuestionTimeout)
	def(&c.MaxAttempts, DefaultMaxAttempts)
	def(&c.InFlightPerStream, DefaultInFlightPerStream)
	def(&c.MaxInFlightPerStream, DefaultMaxInFlightPerStream)
	c.InFlightPerStream = min(c.InFlightPerStream, c.MaxInFlightPerStream)
	def(&c.MaxHeldPerStream, DefaultMaxHeldPerStream)
	def(&c.MaxInFlightPerDocument, DefaultMaxInFlightPerDocument)
	def(&c.MaxClaimsPerStream, DefaultMaxClaimsPerStream)
	def(&c.MaxPendingWrites, DefaultMaxPendingWrites)
	def(&c.MaxRecvMessageBytes, DefaultMaxMessageBytes)
	def(&c.MaxSendMessageBytes, DefaultMaxMessageBytes)
	def(&c.MaxSendQueue, DefaultMaxSendQueue)
	if c.MaxConcurrentStreams == 0 {
		c.MaxConcurrentStreams = DefaultMaxConcurrentStreams
	}
	def(&c.MaxPatternDocuments, DefaultMaxPatternDocuments)
	return c
}

// policyFor is the fallback policy for a name.
func (c *Config) policyFor(name string) Policy {
	best, rank := c.Policy, -1
	for _, r := range c.Fallback {
		p := pattern{exact: r.Exact, text: r.Prefix}
		if p.match(name) && p.rank() > rank {
			best, rank = r.Policy, p.rank()
		}
	}
	if best != PolicyClosed {
		return PolicyOpen
	}
	return best
}

// pattern is a claim's or rule's name pattern.
type pattern struct {
	exact bool
	text  string
}

func (p pattern) match(name string) bool {
	if p.exact {
		return name == p.text
	}
	return strings.HasPrefix(name, p.text)
}

// rank orders patterns by specificity: any exact pattern beats every
// prefix, and a longer prefix beats a shorter one.
func (p pattern) rank() int {
	if p.exact {
		return 1 << 30
	}
	return len(p.text)
}
