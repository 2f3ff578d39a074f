package admission

import (
	"net/http"
	"net/url"
	"strings"
)

// origins is the Origin rule, built once from Config.AllowedOrigins.
type origins struct {
	any     bool
	allowed map[string]struct{} // normalised "scheme://host[:port]"
}

func newOrigins(list []string) origins {
	if len(list) == 1 && list[0] == AnyOrigin {
		return origins{any: true}
	}
	o := origins{allowed: make(map[string]struct{}, len(list))}
	for _, e := range list {
		if n, ok := normalOrigin(strings.TrimSuffix(e, "/")); ok {
			o.allowed[n] = struct{}{}
		}
	}
	return o
}

// allow reports whether r passes the Origin rule: no Origin header (a
// non-browser client), an origin on the request's own host (port included),
// or one in the allow-list. "null", an empty, repeated or malformed Origin
// never passes, unless the rule is off.
func (o origins) allow(r *http.Request) bool {
	if o.any {
		return true
	}
	vals := r.Header.Values("Origin")
	if len(vals) == 0 {
		return true
	}
	if len(vals) != 1 {
		return false
	}
	n, ok := normalOrigin(vals[0])
	if !ok {
		return false
	}
	if host := strings.ToLower(r.Host); host != "" && n[strings.Index(n, "://")+3:] == host {
		return true
	}
	_, ok = o.allowed[n]
	return ok
}

// normalOrigin returns s as "scheme://host[:port]" in lower case, or false
// when s is not exactly a serialised origin ("null" is not: it names no host).
func normalOrigin(s string) (string, bool) {
	if s == "" || s == "null" {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(s, "#?") {
		return "", false
	}
	if strings.HasSuffix(u.Host, ":") || strings.ContainsAny(u.Host, " \t") {
		return "", false
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host), true
}
