package admission

import (
	"strings"
	"time"
)

// Reason codes the door itself gives.
const (
	ReasonLimit          = "limit"
	ReasonOrigin         = "origin"
	ReasonHost           = "host"
	ReasonIdentifyFailed = "identify-failed"
	// ReasonRefused stands for an identifier's refusal in counts, and in the
	// body of one that gave no reasons of its own.
	ReasonRefused = "refused"
)

// Reason is one refusal reason as it crosses the wire.
type Reason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Refusal is a refused request: an HTTP status, the reasons, and for a rate
// limit how long to wait. An Identifier returns one to refuse a peer; the
// gate also describes its own refusals with it.
type Refusal struct {
	// Status is a 4xx code; zero or anything outside 400-499 means 401
	// for an identifier's refusal.
	Status  int
	Reasons []Reason
	// RetryAfter, when positive, is sent as Retry-After in whole seconds
	// (rounded up).
	RetryAfter time.Duration
}

func (r *Refusal) Error() string {
	if r == nil {
		return "admission: refused"
	}
	codes := make([]string, len(r.Reasons))
	for i, x := range r.Reasons {
		codes[i] = x.Code
	}
	return "admission: refused (" + strings.Join(codes, ", ") + ")"
}

func refusal(status int, code, msg string) *Refusal {
	return &Refusal{Status: status, Reasons: []Reason{{Code: code, Message: msg}}}
}

// Messages of the door's own refusals, fixed so clients and tests can rely
// on them.
const (
	msgLimit          = "too many requests from this address; retry later"
	msgOrigin         = "this origin may not connect"
	msgHost           = "this host name may not be used to reach the gateway"
	msgIdentifyFailed = "the peer could not be identified"
	msgRefused        = "the peer was refused"
)
