package bridge

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/weftgate/weftgate/gateway/admission"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

var _ admission.Identifier = (*Server)(nil)

// Identify asks the identify claimant of the handshake's URL path who a
// peer is (admission.Identifier); with no claimant Config.Identifier
// decides. It blocks until an answer, the policy, or ctx.
func (s *Server) Identify(ctx context.Context, p admission.Peer) (admission.Identity, error) {
	path := "/"
	if p.URL != nil && p.URL.Path != "" {
		path = p.URL.Path
	}
	q := func() *v1.Question {
		return &v1.Question{Kind: &v1.Question_Identify{Identify: &v1.IdentifyQuestion{Handshake: handshakeOf(p)}}}
	}
	type result struct {
		id  admission.Identity
		err error
	}
	done := make(chan result, 1)
	a := &ask{
		kind: v1.QuestionKind_QUESTION_KIND_IDENTIFY, name: path, build: q,
		answered: func(ans *v1.Answer) {
			id, err := identifyVerdict(ans)
			done <- result{id, err}
		},
		fellBack: func(fb fallback) {
			if fb == fbNone {
				id, err := s.cfg.Identifier.Identify(ctx, p)
				done <- result{id, err}
				return
			}
			id, err := s.identifyFallback(path, fb)
			done <- result{id, err}
		},
	}
	s.router.start(a)
	select {
	case r := <-done:
		return r.id, r.err
	case <-ctx.Done():
		s.router.cancel(a)
		return admission.Identity{}, ctx.Err()
	}
}

var errIdentifyFailed = errors.New("bridge: the identify authority failed")

func identifyVerdict(a *v1.Answer) (admission.Identity, error) {
	switch k := a.Kind.(type) {
	case *v1.Answer_Identify:
		if k.Identify == nil {
			return admission.Identity{}, errIdentifyFailed
		}
		if k.Identify.Admitted {
			return identityFromProto(k.Identify.Identity), nil
		}
		ref := &admission.Refusal{Status: http.StatusUnauthorized}
		for _, r := range k.Identify.Reasons {
			if r != nil && r.Code != "" {
				ref.Reasons = append(ref.Reasons, admission.Reason{Code: r.Code, Message: r.Message})
			}
		}
		return admission.Identity{}, ref
	}
	// A Failure, or an answer of another kind: the handshake gets 500.
	return admission.Identity{}, errIdentifyFailed
}

// identifyFallback: open admits as anonymous; closed (and a busy bridge)
// refuses with 503 and the reason, which the admission gate keeps.
func (s *Server) identifyFallback(path string, fb fallback) (admission.Identity, error) {
	v := acceptFallback(&s.cfg, path, fb)
	if v.Accepted() {
		return admission.Identity{Anonymous: true}, nil
	}
	return admission.Identity{}, &admission.Refusal{
		Status:     http.StatusServiceUnavailable,
		RetryAfter: time.Second,
		Reasons:    []admission.Reason{{Code: v.Reasons[0].Code, Message: v.Reasons[0].Message}},
	}
}

// handshakeOf is the request as an identify authority sees it.
func handshakeOf(p admission.Peer) *v1.Handshake {
	h := &v1.Handshake{RemoteAddr: p.Addr, ConnectionId: p.Conn}
	if p.URL != nil {
		h.Path, h.RawQuery, h.Host = p.URL.Path, p.URL.RawQuery, p.URL.Host
	}
	if h.Host == "" {
		h.Host = p.Header.Get("Host")
	}
	names := make([]string, 0, len(p.Header))
	byName := map[string][]string{}
	for k, vs := range p.Header {
		n := strings.ToLower(k)
		if _, ok := byName[n]; !ok {
			names = append(names, n)
		}
		byName[n] = append(byName[n], vs...)
	}
	sort.Strings(names)
	for _, n := range names {
		h.Headers = append(h.Headers, &v1.Header{Name: n, Values: byName[n]})
	}
	return h
}
