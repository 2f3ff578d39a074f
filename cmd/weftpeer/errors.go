package main

import (
	"fmt"
	"strings"

	"github.com/weftgate/weftgate/protocol/frame"
)

// Codes weftpeer prints first on its error line (`weftpeer: CODE: ...`),
// stable for scripts. An open the gateway declines prints the gateway's own
// reason instead (no-document, forbidden, root-mismatch, ...).
const (
	codeUsage      = "usage"
	codeBadURL     = "bad-url"
	codeBadName    = "bad-name"
	codeBadCommit  = "bad-commit"
	codeConnect    = "connect-failed"    // no HTTP answer: refused, unreachable, TLS
	codeHandshake  = "handshake-refused" // an HTTP answer other than the upgrade
	codeTimeout    = "timeout"
	codeRefused    = "refused"
	codeEnded      = "ended"       // the gateway ended the document or the link
	codeFellBehind = "fell-behind" // events were dropped because output was slow
	codeDrifted    = "drifted"     // a commit from the gateway did not apply here
	codeOutput     = "output"
)

// failure is weftpeer's error value: a stable code, an exit code, and the
// reasons of a refusal.
type failure struct {
	code    string
	exit    int
	msg     string
	reasons []frame.Reason
}

func (f *failure) Error() string { return f.code + ": " + f.msg }

func fail(code string, exit int, format string, args ...any) *failure {
	return &failure{code: code, exit: exit, msg: fmt.Sprintf(format, args...)}
}

// reasonText is one refusal reason as a line: code: message at /path.
func reasonText(r frame.Reason) string {
	s := r.Code
	if r.Message != "" {
		s += ": " + r.Message
	}
	if r.Path != nil {
		s += " at /" + strings.Join(r.Path, "/")
	}
	return s
}
