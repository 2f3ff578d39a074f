package docsm

import (
	"strings"
	"testing"
)

// TestWaitersTranscripts walks testdata/waiters*.txt: one document's
// waiters, with its conditions set by the script.
//
//	settled yes|no     everything applied is durable, no creator holds it
//	undecided yes|no   a commit waits for its verdict
//	read a             a waits for settled: "run a" when at once
//	replace b          b also waits for the verdicts (idle)
//	ready              "run a" for each that may run now, in order
func TestWaitersTranscripts(t *testing.T) {
	var ws Waiters[string]
	settled, undecided := true, false
	runScript(t, "waiters", func(t *testing.T, line string) []string {
		f := strings.Fields(line)
		switch f[0] {
		case "settled":
			settled = f[1] == "yes"
		case "undecided":
			undecided = f[1] == "yes"
		case "read", "replace":
			if ws.Add(f[1], f[0] == "replace", settled, undecided) {
				return []string{"run " + f[1]}
			}
		case "ready":
			var out []string
			for {
				w, ok := ws.Next(settled, undecided)
				if !ok {
					return out
				}
				out = append(out, "run "+w)
			}
		default:
			t.Fatalf("unknown command %q", line)
		}
		return nil
	})
}
