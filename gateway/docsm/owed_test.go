package docsm

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestOwedTranscripts walks testdata/owed*.txt: one member's Owed, with the
// document's cursor and durable cursor moved by the script.
//
//	want           the member asks: "take" when a state must be taken now
//	take S         the driver takes state S at the current cursor ("state S"
//	               at once when that cursor is durable)
//	apply N        N commits are applied (the cursor moves)
//	back N         a store failure refused what was after cursor N
//	durable N      the store made everything up to cursor N durable: any
//	               state due is sent ("state S"), then each commit up to N
//	               is offered ("commit C" when the member gets it)
func TestOwedTranscripts(t *testing.T) {
	var o Owed
	var cursor, durable uint64
	runScript(t, "owed", func(t *testing.T, line string) []string {
		f := strings.Fields(line)
		switch f[0] {
		case "want":
			if o.Want() {
				return []string{"take"}
			}
			return []string{"answered by the state under way"}
		case "take":
			o.Take([]byte(f[1]), cursor)
			if s, ok := o.Due(durable); ok { // taken at a durable cursor: at once
				return []string{"state " + string(s)}
			}
		case "apply":
			n, _ := strconv.Atoi(f[1])
			cursor += uint64(n)
		case "back":
			n, _ := strconv.ParseUint(f[1], 10, 64)
			cursor = n
		case "durable":
			n, _ := strconv.ParseUint(f[1], 10, 64)
			var out []string
			for c := durable + 1; c <= n; c++ {
				durable = c
				if s, ok := o.Due(durable); ok {
					out = append(out, "state "+string(s))
				}
				if o.Gets(c) {
					out = append(out, fmt.Sprintf("commit %d", c))
				}
			}
			return out
		default:
			t.Fatalf("unknown command %q", line)
		}
		return nil
	})
}
