package admission

import (
	"context"
	"net/http"
	"net/url"
)

// Peer is what an Identifier may look at: the request as the door saw it.
// Header and URL are copies; Cookies are every cookie in request order (an
// identifier reading "session" should try each, as the JS gate does).
// Conn is the connection number the peer will have if admitted (the
// gateway's link "c7" is 7); 0 when the caller numbers none.
type Peer struct {
	Addr    string
	Header  http.Header
	Cookies []*http.Cookie
	URL     *url.URL
	TLS     bool
	Conn    uint64
}

// Identity is who a connection is, fixed for its life.
type Identity struct {
	ID        string
	Anonymous bool
	Roles     []string
	Claims    map[string]string
}

// Identifier decides who a peer is at the handshake. Returning a *Refusal
// refuses the peer (401 by default); any other error is the identifier's
// defect and answers 500 "identify-failed". A panic counts as such an error.
type Identifier interface {
	Identify(ctx context.Context, p Peer) (Identity, error)
}

// IdentifierFunc adapts a function to Identifier.
type IdentifierFunc func(ctx context.Context, p Peer) (Identity, error)

// Identify calls f.
func (f IdentifierFunc) Identify(ctx context.Context, p Peer) (Identity, error) { return f(ctx, p) }

// Anonymous identifies everyone as anonymous: the default Identifier.
type Anonymous struct{}

// Identify returns the anonymous identity.
func (Anonymous) Identify(context.Context, Peer) (Identity, error) {
	return Identity{Anonymous: true}, nil
}
