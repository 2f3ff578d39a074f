package admission

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// hosts is the Host rule, built once from Config.LoopbackHosts and
// Config.AllowedHosts. It stops DNS rebinding: a page on a name the
// attacker resolves to 127.0.0.1 sends its own name as Host and as Origin,
// so the Origin rule (same host) lets it through; only the Host can tell.
type hosts struct {
	on      bool
	allowed map[string]struct{} // lower-case host names, no port
}

func newHosts(on bool, list []string) hosts {
	if !on || len(list) == 1 && list[0] == AnyHost {
		return hosts{}
	}
	h := hosts{on: true, allowed: make(map[string]struct{}, len(list))}
	for _, e := range list {
		if n, ok := normalHost(e); ok {
			h.allowed[n] = struct{}{}
		}
	}
	return h
}

// allow reports whether r's Host passes: the rule is off, or the Host
// (any port) is localhost, a loopback address, or in the allow-list.
func (h hosts) allow(r *http.Request) bool {
	if !h.on {
		return true
	}
	name := hostName(r.Host)
	if name == "" {
		return false
	}
	if name == "localhost" {
		return true
	}
	if a, err := netip.ParseAddr(name); err == nil && a.Zone() == "" && a.IsLoopback() {
		return true
	}
	_, ok := h.allowed[name]
	return ok
}

// hostName is the lower-case host of a Host header without its port or an
// IPv6 literal's brackets; "" when it is malformed.
func hostName(hostport string) string {
	host := hostport
	if h, port, err := net.SplitHostPort(hostport); err == nil {
		if !isPort(port) {
			return "" // "name:" with an empty or bad port
		}
		host = h
	} else if strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]") {
		host = hostport[1 : len(hostport)-1]
	} else if strings.ContainsAny(hostport, "[]") || strings.Count(hostport, ":") == 1 {
		return "" // "name:" with an empty or bad port, or a stray bracket
	}
	if host == "" || strings.ContainsAny(host, " \t/@") {
		return ""
	}
	return strings.ToLower(host)
}

// isPort says whether p is a port number: 1 to 5 digits.
func isPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// normalHost is an AllowedHosts entry as hosts.allow compares it: a host
// name or IP address without a port, lower case.
func normalHost(e string) (string, bool) {
	if e == "" || strings.ContainsAny(e, " \t/@") {
		return "", false
	}
	if strings.HasPrefix(e, "[") && strings.HasSuffix(e, "]") {
		e = e[1 : len(e)-1]
	}
	if strings.Contains(e, ":") {
		// Only an IPv6 literal may hold a colon: ports are not part of an
		// entry, every port of an allowed name is allowed.
		if a, err := netip.ParseAddr(e); err != nil || !a.Is6() {
			return "", false
		}
	}
	return strings.ToLower(e), true
}
