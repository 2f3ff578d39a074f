package document

import (
	"strings"

	"github.com/weftgate/weftgate/protocol"
)

// Refusal is why Apply or Reconcile refused a commit: every rule it broke
// that was found, most important first (see the precedence in doc.go), at
// most MaxReasons of them. The first reason is the commit's reason, the
// one a conformance fixture names.
//
// Each element maps onto one entry of a refused frame, [code, message,
// path or null], with Path nil when the target has no attach path.
type Refusal struct {
	Reasons []*protocol.Error
}

func (r *Refusal) Error() string {
	var b strings.Builder
	b.WriteString("document: refused: ")
	for i, e := range r.Reasons {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap gives the first reason, so protocol.ReasonOf and errors.As see it.
func (r *Refusal) Unwrap() error { return r.Reasons[0] }

// Reason is the reason of the first (most important) element.
func (r *Refusal) Reason() protocol.Reason { return r.Reasons[0].Reason }
