package requests

import "errors"

// ErrViolation is what every protocol violation is (errors.Is): the text
// was not a request-channel message and the caller must close the socket.
var ErrViolation = errors.New("requests: protocol violation")

// ViolationKind names what was wrong with a message.
type ViolationKind string

const (
	InvalidJSON  ViolationKind = "invalid-json"
	NotObject    ViolationKind = "not-object"
	MissingID    ViolationKind = "missing-id"
	NonIntegerID ViolationKind = "non-integer-id"
	// NoField: neither a string "name" nor "result", "progress" or "error".
	NoField ViolationKind = "no-field"
	// TooLarge: longer than Config.MaxMessageBytes.
	TooLarge ViolationKind = "too-large"
)

// Violation is a protocol violation of a known kind.
type Violation struct {
	Kind ViolationKind
}

func violation(k ViolationKind) error { return &Violation{Kind: k} }

func (v *Violation) Error() string { return "requests: protocol violation: " + string(v.Kind) }

// Is makes every *Violation match ErrViolation.
func (v *Violation) Is(target error) bool { return target == ErrViolation }
