package requests

import (
	"errors"

	"github.com/weftgate/weftgate/gateway/admission"

	"github.com/weftgate/weftgate/protocol"
)

// Error reasons of answers (client notes section 9), plus busy, ours.
const (
	ReasonMissing = "missing"
	ReasonRefused = "refused"
	ReasonFailed  = "failed"
	ReasonClosed  = string(protocol.Closed)
	ReasonNotData = "not-data"
	// ReasonBusy answers a request past Config.MaxInFlight: the socket has
	// that many calls unanswered. The client may ask again after an answer.
	ReasonBusy = "busy"
)

var (
	// ErrMissing is what a Calls returns when nothing answers the name.
	ErrMissing = errors.New("requests: nothing answers this call")
	// ErrNotData is a value that cannot be sent as JSON.
	ErrNotData = errors.New("requests: the value is not JSON data")
)

// Failure is a failed call whose message and reasons were written for the
// client: it is answered "failed" with them, where any other error's text
// stays on the server.
type Failure struct {
	Message string
	Reasons []admission.Reason
}

func (f *Failure) Error() string { return "requests: the call failed: " + f.Message }

// maxEchoedName bounds the name repeated in a "missing" message.
const maxEchoedName = 256

// errorFor is the answer err gets. Only a refusal's reasons and the call's
// own name cross; any other error text stays here, since it may say more
// about the server than the client should hear.
func errorFor(name string, err error) ErrorBody {
	var ref *admission.Refusal
	var fail *Failure
	switch {
	case errors.As(err, &fail) && fail != nil:
		e := ErrorBody{Reason: ReasonFailed, Message: fail.Message}
		if e.Message == "" {
			e.Message = "the call failed"
		}
		for _, r := range fail.Reasons {
			if r.Code != "" {
				e.Reasons = append(e.Reasons, r)
			}
		}
		return e
	case errors.As(err, &ref) && ref != nil:
		e := ErrorBody{Reason: ReasonRefused, Message: "the call was refused"}
		for _, r := range ref.Reasons {
			if r.Code != "" {
				e.Reasons = append(e.Reasons, r)
			}
		}
		return e
	case errors.Is(err, ErrMissing):
		if len(name) > maxEchoedName {
			return ErrorBody{Reason: ReasonMissing, Message: "nothing here answers this call"}
		}
		return ErrorBody{Reason: ReasonMissing, Message: "nothing here answers " + name}
	case errors.Is(err, ErrNotData):
		return ErrorBody{Reason: ReasonNotData, Message: "the result could not be encoded as JSON"}
	}
	return ErrorBody{Reason: ReasonFailed, Message: "the call failed"}
}

var busy = ErrorBody{Reason: ReasonBusy, Message: "too many calls in flight on this socket"}
