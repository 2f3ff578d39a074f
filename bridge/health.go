package bridge

import (
	"sort"
	"strings"
	"time"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// maxBackendHealth bounds how many backend names the bridge remembers;
// past it, the one gone longest is forgotten.
const maxBackendHealth = 256

// BackendStatus is one backend's authority streams as the gateway sees
// them: whether it is connected, and how it has been failing.
type BackendStatus struct {
	Backend string `json:"backend"`
	// State is "connected" while the backend has a stream open, else
	// "disconnected".
	State   string `json:"state"`
	Streams int    `json:"streams"`
	Claims  int    `json:"claims"`
	// InFlight is the questions sent to it and not yet answered.
	InFlight int `json:"in_flight"`
	// LastError is why its last stream ended or its last question timed
	// out; ConsecutiveFailures counts those since its last answer.
	LastError           string    `json:"last_error,omitempty"`
	LastErrorAt         time.Time `json:"last_error_at,omitzero"`
	ConsecutiveFailures int       `json:"consecutive_failures"`
	// ClaimList is every claim in force on its streams, by stream then
	// claim id: at most MaxClaimsPerStream per stream.
	ClaimList []ClaimStatus `json:"claim_list"`
}

// ClaimStatus is one claim in force on an authority stream.
type ClaimStatus struct {
	StreamID uint64 `json:"stream_id"`
	ClaimID  uint64 `json:"claim_id"`
	// Match is "exact" or "prefix"; Pattern is the name or the prefix (""
	// matches every name).
	Match   string `json:"match"`
	Pattern string `json:"pattern"`
	// Kinds are the question kinds claimed: accept, load, identify,
	// may_open, call.
	Kinds []string `json:"kinds"`
}

// status describes c.
func (c *claim) status() ClaimStatus {
	cs := ClaimStatus{StreamID: c.st.id, ClaimID: c.id, Match: "prefix", Pattern: c.pat.text, Kinds: []string{}}
	if c.pat.exact {
		cs.Match = "exact"
	}
	for k := v1.QuestionKind_QUESTION_KIND_ACCEPT; k <= v1.QuestionKind_QUESTION_KIND_CALL; k++ {
		if c.has(k) {
			cs.Kinds = append(cs.Kinds, strings.ToLower(strings.TrimPrefix(k.String(), "QUESTION_KIND_")))
		}
	}
	return cs
}

// backendHealth is what the router remembers of one backend name. Guarded
// by router.mu.
type backendHealth struct {
	streams  int
	lastErr  string
	errAt    time.Time
	failures int
	goneAt   time.Time
}

func (r *router) healthOf(backend string) *backendHealth {
	if r.health == nil {
		r.health = map[string]*backendHealth{}
	}
	h := r.health[backend]
	if h == nil {
		if len(r.health) >= maxBackendHealth {
			r.forgetOldest()
		}
		h = &backendHealth{}
		r.health[backend] = h
	}
	return h
}

func (r *router) forgetOldest() {
	var name string
	var oldest time.Time
	for n, h := range r.health {
		if h.streams == 0 && (name == "" || h.goneAt.Before(oldest)) {
			name, oldest = n, h.goneAt
		}
	}
	if name != "" {
		delete(r.health, name)
	}
}

func (r *router) failed(backend, why string) {
	h := r.healthOf(backend)
	h.failures++
	h.lastErr, h.errAt = why, time.Now()
}

// Backends reports every backend the bridge has seen, by name.
func (s *Server) Backends() []BackendStatus {
	r := s.router
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]BackendStatus, 0, len(r.health))
	for name, h := range r.health {
		b := BackendStatus{Backend: name, State: "disconnected", Streams: h.streams,
			LastError: h.lastErr, LastErrorAt: h.errAt, ConsecutiveFailures: h.failures, ClaimList: []ClaimStatus{}}
		if h.streams > 0 {
			b.State = "connected"
		}
		for _, st := range r.streams {
			if st.backend == name {
				b.Claims += len(st.claims)
				b.InFlight += st.inflight
				for _, c := range st.claims {
					b.ClaimList = append(b.ClaimList, c.status())
				}
			}
		}
		sort.Slice(b.ClaimList, func(i, j int) bool {
			x, y := b.ClaimList[i], b.ClaimList[j]
			return x.StreamID < y.StreamID || x.StreamID == y.StreamID && x.ClaimID < y.ClaimID
		})
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Backend < out[j].Backend })
	return out
}
