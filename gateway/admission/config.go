package admission

import (
	"strconv"
	"strings"
	"time"
)

// Defaults, matching the JS server where it has one.
const (
	// DefaultLimit handshakes and HTTP requests per address per DefaultWindow.
	DefaultLimit  = 600
	DefaultWindow = 60 * time.Second
	// DefaultMaxAddresses bounds the rate limiter's address table.
	DefaultMaxAddresses = 65536
	// DefaultIdentifyTimeout bounds one Identify call.
	DefaultIdentifyTimeout = 10 * time.Second
)

// AnyOrigin, as the only entry of AllowedOrigins, turns the Origin rule off.
const AnyOrigin = "any"

// AnyHost, as the only entry of AllowedHosts, turns the Host rule off.
const AnyHost = "any"

// Config configures a Gate. The zero value works: 600 per 60 s, same-host
// origins only, everyone anonymous.
type Config struct {
	// Limit is how many handshakes and HTTP requests one address may make
	// per Window (a token bucket of Limit tokens refilled over Window).
	// Zero means DefaultLimit; negative turns the rate limit off.
	Limit  int
	Window time.Duration
	// MaxAddresses bounds how many addresses the limiter tracks. When the
	// table is full, the least recently seen address is forgotten, so its
	// next request starts with a full allowance: memory stays bounded and a
	// busy address (recently seen) keeps its count.
	MaxAddresses int

	// AllowedOrigins are full origins ("https://app.example.com") allowed
	// besides the request's own host. The single entry "any" turns the rule
	// off. A malformed entry never matches (see Validate).
	AllowedOrigins []string

	// LoopbackHosts turns the Host rule on: only a Host (any port) that is
	// localhost, a loopback address (127.0.0.0/8, [::1]) or in AllowedHosts
	// is admitted; others get 403 "host". Set it when the gateway listens
	// on loopback only, against DNS rebinding (a page on a name rebound to
	// 127.0.0.1 sends that name as its Host and its Origin).
	LoopbackHosts bool
	// AllowedHosts are host names or addresses, without a port, admitted
	// besides loopback ones under the Host rule. The single entry "any"
	// turns the rule off. A malformed entry never matches (see Validate).
	AllowedHosts []string

	// TrustProxy takes the peer address from the last X-Forwarded-For entry
	// and TLS from X-Forwarded-Proto. Only set it behind a proxy that
	// overwrites or appends these headers: otherwise any client can choose
	// its address and escape the rate limit.
	TrustProxy bool

	// Identifier identifies the peer; nil identifies everyone as anonymous.
	Identifier Identifier
	// IdentifyTimeout bounds one Identify call; zero means the default.
	IdentifyTimeout time.Duration

	// OnRefuse, when set, hears the reason of every refusal (limit, host, origin,
	// refused, identify-failed); metrics attach here. It must not block.
	OnRefuse func(reason string)

	// Now is the clock; nil means time.Now. Tests inject one.
	Now func() time.Time
}

// withDefaults returns c with zero fields replaced by their defaults.
func (c Config) withDefaults() Config {
	if c.Limit == 0 {
		c.Limit = DefaultLimit
	}
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.MaxAddresses <= 0 {
		c.MaxAddresses = DefaultMaxAddresses
	}
	if c.IdentifyTimeout <= 0 {
		c.IdentifyTimeout = DefaultIdentifyTimeout
	}
	if c.Identifier == nil {
		c.Identifier = Anonymous{}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate reports the first malformed AllowedOrigins or AllowedHosts
// entry. New accepts a config that fails it (the bad entry just never
// matches); the binary calls Validate at start-up to fail loudly instead.
func (c Config) Validate() error {
	if len(c.AllowedOrigins) != 1 || c.AllowedOrigins[0] != AnyOrigin {
		for _, o := range c.AllowedOrigins {
			if _, ok := normalOrigin(strings.TrimSuffix(o, "/")); !ok {
				return &ConfigError{Field: "AllowedOrigins", Value: o}
			}
		}
	}
	if len(c.AllowedHosts) != 1 || c.AllowedHosts[0] != AnyHost {
		for _, h := range c.AllowedHosts {
			if _, ok := normalHost(h); !ok {
				return &ConfigError{Field: "AllowedHosts", Value: h}
			}
		}
	}
	return nil
}

// ConfigError names a config field holding a value that cannot work.
type ConfigError struct {
	Field string
	Value string
}

func (e *ConfigError) Error() string {
	return "admission: malformed " + e.Field + " entry " + strconv.Quote(e.Value)
}
