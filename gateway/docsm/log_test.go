package docsm

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestLogTranscripts walks testdata/log.txt: one document's Log, with
// items named by the script.
//
//	land a b    apply a and b: "a @1" each
//	flush       the batch to append now: "append a b", or nothing
//	appended    the append in flight is durable: "durable a @1" each
//	failed      it failed: "failed a @1" each, "later b @2" each
//	restart N   the reload found the store at cursor N
//	recover N   split the last failed batch by a reload that found the
//	            store at N ("recover -" when the reload failed too):
//	            "landed a @1", "refused b @2", "unknown c @3" each
//	state       cursor, durable cursor, in flight
func TestLogTranscripts(t *testing.T) {
	var l Log[string]
	var batch, later []Landed[string]
	runScript(t, "log", func(t *testing.T, line string) []string {
		f := strings.Fields(line)
		var out []string
		switch f[0] {
		case "land":
			for _, it := range f[1:] {
				out = append(out, fmt.Sprintf("%s @%d", it, l.Land(it)))
			}
		case "flush":
			if b := l.Flush(); b != nil {
				s := "append"
				for _, e := range b {
					s += " " + e.Item
				}
				out = append(out, s)
			}
		case "appended":
			for _, e := range l.Appended() {
				out = append(out, fmt.Sprintf("durable %s @%d", e.Item, e.Cursor))
			}
		case "failed":
			batch, later = l.Failed()
			for _, e := range batch {
				out = append(out, fmt.Sprintf("failed %s @%d", e.Item, e.Cursor))
			}
			for _, e := range later {
				out = append(out, fmt.Sprintf("later %s @%d", e.Item, e.Cursor))
			}
		case "recover":
			n, err := strconv.ParseUint(f[1], 10, 64)
			r := Recover(batch, later, n, err == nil)
			for _, e := range r.Landed {
				out = append(out, fmt.Sprintf("landed %s @%d", e.Item, e.Cursor))
			}
			for _, e := range r.Refused {
				out = append(out, fmt.Sprintf("refused %s @%d", e.Item, e.Cursor))
			}
			for _, e := range r.Unknown {
				out = append(out, fmt.Sprintf("unknown %s @%d", e.Item, e.Cursor))
			}
			if r.Known {
				l.Restart(r.Restart)
			}
		case "restart":
			n, _ := strconv.ParseUint(f[1], 10, 64)
			l.Restart(n)
		case "state":
			out = append(out, fmt.Sprintf("cursor %d durable %d in-flight %d", l.Cursor(), l.Durable(), l.InFlight()))
		default:
			t.Fatalf("unknown command %q", line)
		}
		return out
	})
}
