package admission

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Gate runs the checks before an upgrade. It is safe for concurrent use.
type Gate struct {
	cfg     Config
	lim     *limiter // nil when the rate limit is off
	origins origins
	hosts   hosts
	counts  counts
}

// New returns a Gate for cfg; the zero Config works.
func New(cfg Config) *Gate {
	cfg = cfg.withDefaults()
	g := &Gate{cfg: cfg, origins: newOrigins(cfg.AllowedOrigins), hosts: newHosts(cfg.LoopbackHosts, cfg.AllowedHosts)}
	if cfg.Limit > 0 {
		g.lim = newLimiter(cfg.Limit, cfg.Window, cfg.MaxAddresses)
	}
	return g
}

// Admit runs every check on a handshake. On success it returns the peer's
// identity and true; otherwise it has written the refusal to w and returns
// false, and the caller must not upgrade.
func (g *Gate) Admit(w http.ResponseWriter, r *http.Request) (Identity, bool) {
	id, ref := g.Check(r, 0)
	if ref != nil {
		WriteRefusal(w, ref)
		return Identity{}, false
	}
	return id, true
}

// Check runs the checks in order (rate, host, origin, identity) without writing
// anything, returning the identity or the refusal Admit would write. conn
// is the connection number the identifier is told (Peer.Conn).
func (g *Gate) Check(r *http.Request, conn uint64) (Identity, *Refusal) {
	addr := PeerAddr(r, g.cfg.TrustProxy)
	if ref := g.Rate(addr); ref != nil {
		return Identity{}, ref
	}
	if ref := g.Host(r); ref != nil {
		return Identity{}, ref
	}
	if ref := g.Origin(r); ref != nil {
		return Identity{}, ref
	}
	p := g.peer(r, addr)
	p.Conn = conn
	return g.Identify(r.Context(), p)
}

// Rate counts one request from addr, refusing it with 429 "limit" past the
// limit.
func (g *Gate) Rate(addr string) *Refusal {
	if g.lim == nil {
		return nil
	}
	ok, wait := g.lim.allow(addr, g.cfg.Now())
	if ok {
		return nil
	}
	ref := refusal(http.StatusTooManyRequests, ReasonLimit, msgLimit)
	ref.RetryAfter = wait
	g.refused(ReasonLimit)
	return ref
}

// Origin applies the Origin rule, refusing with 403 "origin".
func (g *Gate) Origin(r *http.Request) *Refusal {
	if g.origins.allow(r) {
		return nil
	}
	g.refused(ReasonOrigin)
	return refusal(http.StatusForbidden, ReasonOrigin, msgOrigin)
}

// Host applies the Host rule, refusing with 403 "host".
func (g *Gate) Host(r *http.Request) *Refusal {
	if g.hosts.allow(r) {
		return nil
	}
	g.refused(ReasonHost)
	return refusal(http.StatusForbidden, ReasonHost, msgHost)
}

// Identify asks the Identifier who p is. Its *Refusal comes back with a 4xx
// status (401 by default) or 503, and at least one reason; any other error, a panic
// or running past IdentifyTimeout is a 500 "identify-failed".
func (g *Gate) Identify(ctx context.Context, p Peer) (Identity, *Refusal) {
	ctx, cancel := context.WithTimeout(ctx, g.cfg.IdentifyTimeout)
	defer cancel()
	id, err := g.callIdentifier(ctx, p)
	if err == nil {
		return id, nil
	}
	if ref, ok := asRefusal(err); ok {
		g.refused(ReasonRefused)
		return Identity{}, ref
	}
	g.refused(ReasonIdentifyFailed)
	return Identity{}, refusal(http.StatusInternalServerError, ReasonIdentifyFailed, msgIdentifyFailed)
}

// callIdentifier turns an identifier's panic into an error: a defect, not a
// crash of the server.
func (g *Gate) callIdentifier(ctx context.Context, p Peer) (id Identity, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("admission: identifier panicked: %v", v)
		}
	}()
	return g.cfg.Identifier.Identify(ctx, p)
}

// asRefusal finds a *Refusal in err's chain and returns a sanitised copy.
func asRefusal(err error) (*Refusal, bool) {
	var ref *Refusal
	if !errors.As(err, &ref) || ref == nil {
		return nil, false
	}
	out := &Refusal{Status: ref.Status, RetryAfter: ref.RetryAfter}
	// 4xx is the peer's to fix; 503 says the identifier cannot answer now
	// (a backend down under the closed policy), which a client retries.
	if (out.Status < 400 || out.Status > 499) && out.Status != http.StatusServiceUnavailable {
		out.Status = http.StatusUnauthorized
	}
	for _, x := range ref.Reasons {
		if x.Code != "" {
			out.Reasons = append(out.Reasons, x)
		}
	}
	if len(out.Reasons) == 0 {
		out.Reasons = []Reason{{Code: ReasonRefused, Message: msgRefused}}
	}
	return out, true
}

func (g *Gate) peer(r *http.Request, addr string) Peer {
	u := *r.URL
	return Peer{
		Addr:    addr,
		Header:  r.Header.Clone(),
		Cookies: r.Cookies(),
		URL:     &u,
		TLS:     peerTLS(r, g.cfg.TrustProxy),
	}
}

// RateLimit wraps an HTTP handler (sign-in, health and the like) in the
// same per-address limit handshakes count against.
func (g *Gate) RateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ref := g.Rate(PeerAddr(r, g.cfg.TrustProxy)); ref != nil {
			WriteRefusal(w, ref)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Tracked is how many addresses the rate limiter holds now.
func (g *Gate) Tracked() int {
	if g.lim == nil {
		return 0
	}
	return g.lim.len()
}
