package requests

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/weftgate/weftgate/gateway/admission"
)

// MaxID is the largest id magnitude accepted: 2^53-1, the largest integer a
// JS number holds exactly. The JS end accepts any integral number, but past
// this two ids cannot be told apart there, so we treat one as a violation.
const MaxID = 1<<53 - 1

// Kind is what a message is.
type Kind uint8

const (
	KindRequest Kind = iota + 1
	KindResult
	KindProgress
	KindError
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindResult:
		return "result"
	case KindProgress:
		return "progress"
	case KindError:
		return "error"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Message is one parsed text message.
type Message struct {
	Kind Kind
	ID   int64
	// Name and Args are a request's; Args is "null" when absent.
	Name string
	Args json.RawMessage
	// Value is a result or progress value, as received.
	Value json.RawMessage
	// Error is an error answer's body.
	Error *ErrorBody
}

// ErrorBody is the "error" of an error answer.
type ErrorBody struct {
	Reason  string             `json:"reason"`
	Message string             `json:"message"`
	Reasons []admission.Reason `json:"reasons,omitempty"`
}

var null = json.RawMessage("null")

// Parse reads one text message. As the JS end does, a message whose "name"
// is a string is a request; otherwise one holding "result", "progress" or
// "error" (in that precedence) is an answer. Anything else is a *Violation.
// Keys are matched exactly; a repeated key counts once, its last value.
func Parse(b []byte) (Message, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return Message{}, violation(InvalidJSON)
		}
		return Message{}, violation(NotObject)
	}
	if obj == nil { // the literal null
		return Message{}, violation(NotObject)
	}
	rawID, ok := obj["id"]
	if !ok {
		return Message{}, violation(MissingID)
	}
	id, ok := parseID(rawID)
	if !ok {
		return Message{}, violation(NonIntegerID)
	}
	m := Message{ID: id}
	var name string
	if raw, ok := obj["name"]; ok && isString(raw) && json.Unmarshal(raw, &name) == nil {
		m.Kind, m.Name, m.Args = KindRequest, name, obj["args"]
		if m.Args == nil {
			m.Args = null
		}
		return m, nil
	}
	if v, ok := obj["result"]; ok {
		m.Kind, m.Value = KindResult, v
		return m, nil
	}
	if v, ok := obj["progress"]; ok {
		m.Kind, m.Value = KindProgress, v
		return m, nil
	}
	if v, ok := obj["error"]; ok {
		m.Kind, m.Error = KindError, errorOf(v)
		return m, nil
	}
	return Message{}, violation(NoField)
}

func isString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

// parseID accepts a JSON number with an integral value within ±MaxID, in
// any spelling JS reads as one (1, 1.0, 1e3, -0).
func parseID(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	s := string(raw)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, n >= -MaxID && n <= MaxID
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != float64(int64(f)) || f < -MaxID || f > MaxID {
		return 0, false
	}
	return int64(f), true
}

// errorOf reads an error answer leniently, as the JS end does: it is only
// ever reported, so a malformed one is "failed" rather than a violation.
func errorOf(raw json.RawMessage) *ErrorBody {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return &ErrorBody{Reason: ReasonFailed, Message: string(raw)}
	}
	e := &ErrorBody{Reason: ReasonFailed}
	if v, ok := obj["reason"]; ok && isString(v) {
		_ = json.Unmarshal(v, &e.Reason)
	}
	e.Message = e.Reason
	if v, ok := obj["message"]; ok && isString(v) {
		_ = json.Unmarshal(v, &e.Message)
	}
	var list []json.RawMessage
	if v, ok := obj["reasons"]; ok && json.Unmarshal(v, &list) == nil {
		for _, item := range list {
			var r map[string]json.RawMessage
			if json.Unmarshal(item, &r) != nil || !isString(r["code"]) || !isString(r["message"]) {
				continue
			}
			var x admission.Reason
			_ = json.Unmarshal(r["code"], &x.Code)
			_ = json.Unmarshal(r["message"], &x.Message)
			e.Reasons = append(e.Reasons, x)
		}
	}
	return e
}
