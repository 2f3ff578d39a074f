package docsm

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/weftgate/weftgate/protocol/frame"
)

// TestAdmitTranscripts walks testdata/admit*.txt: commits decided at the
// head of one document, applied through a Log, as the hub does.
//
//	at N                 the document is at cursor N
//	commit a from x ok   a, from member x, was accepted ("no": refused)
//	write w ok           a backend's write; "write w expect 4 ok" is a
//	                     compare-and-swap at cursor 4
//	gone                 the document was unloaded under the verdicts
//
// Each decision prints "apply a @5", "refuse a to x: forbidden",
// "mismatch w to the backend: expected 4, at 5" or "gone a".
func TestAdmitTranscripts(t *testing.T) {
	var l Log[string]
	held := true
	runScript(t, "admit", func(t *testing.T, line string) []string {
		f := strings.Fields(line)
		switch f[0] {
		case "at":
			n, _ := strconv.ParseUint(f[1], 10, 64)
			l.Restart(n)
			held = true
			return nil
		case "gone":
			held = false
			return nil
		case "commit", "write":
		default:
			t.Fatalf("unknown command %q", line)
		}
		name, origin := f[1], "the backend"
		var expect *uint64
		rest := f[2:]
		if f[0] == "commit" {
			origin, rest = rest[1], rest[2:]
		} else if rest[0] == "expect" {
			n, _ := strconv.ParseUint(rest[1], 10, 64)
			expect, rest = &n, rest[2:]
		}
		v := Verdict{}
		if rest[0] == "no" {
			v = Verdict{Reasons: []frame.Reason{{Code: "forbidden"}}}
		}
		switch Admit(v, held, expect, l.Cursor()) {
		case Apply:
			return []string{fmt.Sprintf("apply %s @%d", name, l.Land(name))}
		case Refused:
			return []string{fmt.Sprintf("refuse %s to %s: %s", name, origin, v.Reasons[0].Code)}
		case Mismatch:
			return []string{fmt.Sprintf("mismatch %s to %s: expected %d, at %d", name, origin, *expect, l.Cursor())}
		case Gone:
			return []string{"gone " + name}
		}
		return nil
	})
}
