package admission

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// PeerAddr is the address r is rate-limited and identified by: the host of
// r.RemoteAddr, or with trustProxy the last X-Forwarded-For entry (the one
// the proxy nearest to us appended; earlier entries are the client's word).
// IP addresses are written canonically so one peer has one key.
func PeerAddr(r *http.Request, trustProxy bool) string {
	if trustProxy {
		if a, ok := forwardedFor(r.Header); ok {
			return a
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return canonicalIP(host)
}

// forwardedFor returns the last valid entry of the last X-Forwarded-For
// header, if any.
func forwardedFor(h http.Header) (string, bool) {
	vals := h.Values("X-Forwarded-For")
	if len(vals) == 0 {
		return "", false
	}
	last := vals[len(vals)-1]
	if i := strings.LastIndexByte(last, ','); i >= 0 {
		last = last[i+1:]
	}
	a, err := netip.ParseAddr(strings.TrimSpace(last))
	if err != nil {
		return "", false
	}
	return a.Unmap().String(), true
}

func canonicalIP(host string) string {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().String()
	}
	return host
}

// peerTLS reports whether the peer reached us over TLS, directly or, with
// trustProxy, as the proxy says.
func peerTLS(r *http.Request, trustProxy bool) bool {
	if r.TLS != nil {
		return true
	}
	return trustProxy && strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto")), "https")
}
