package docsm

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestCreationTranscripts walks testdata/creation*.txt: one document's
// creator's hold, with members named by the script and a clock at 0 that
// moves only by tick. The timeout is 10 s.
//
//	begin a      a creates the document: its hold begins
//	want b       b wants the state: "wait" while held, else "take"
//	state a      a's state arrives: "judge" when taken, "ignored" else
//	landed       the creator's state landed: the hold ends; "take b" for
//	             each want that waited
//	refused      it was refused: "abandon", the waiting wants end with it
//	leave a      a leaves: "abandon" when the creation ends with it
//	tick 5s      move the clock: "abandon state-timeout" when late
//	state        the hold and its deadline
func TestCreationTranscripts(t *testing.T) {
	var c Creation[string]
	var now time.Time
	var waiting []string
	runScript(t, "creation", func(t *testing.T, line string) []string {
		f := strings.Fields(line)
		var out []string
		switch f[0] {
		case "begin":
			c.Begin(f[1], now, 10*time.Second)
			waiting = nil
		case "want":
			if c.Holding() {
				waiting = append(waiting, f[1])
				out = append(out, "wait")
			} else {
				out = append(out, "take "+f[1])
			}
		case "state":
			if len(f) == 1 {
				dl, ok := c.Deadline()
				s := fmt.Sprintf("holding %v", c.Holding())
				if ok {
					s += " late at " + dl.Sub(time.Time{}).String()
				}
				return []string{s}
			}
			if c.StateIn(f[1]) {
				out = append(out, "judge")
			} else {
				out = append(out, "ignored")
			}
		case "landed":
			c.Done()
			for _, w := range waiting {
				out = append(out, "take "+w)
			}
			waiting = nil
		case "refused":
			c.Done()
			out = append(out, "abandon")
			waiting = nil
		case "leave":
			if c.Left(f[1]) {
				out = append(out, "abandon")
				waiting = nil
			}
		case "tick":
			d, err := time.ParseDuration(f[1])
			if err != nil {
				t.Fatal(err)
			}
			now = now.Add(d)
			if c.Late(now) {
				out = append(out, "abandon state-timeout")
				waiting = nil
			}
		default:
			t.Fatalf("unknown command %q", line)
		}
		return out
	})
}

// TestIdleTranscripts walks testdata/idle*.txt: when a document nobody
// holds leaves memory. After is 30 s; the clock starts at 0.
//
//	quiet        it went quiet, stored: "wait until 30s", or "go now"
//	quiet new    it went quiet holding nothing stored
//	tick 10s     move the clock: "unload" when it goes ("+ snapshot" when
//	             durable commits came since the last snapshot)
//	busy         someone holds it again (a link opened it)
//	commit N     commits became durable, up to cursor N
func TestIdleTranscripts(t *testing.T) {
	i := Idle{After: 30 * time.Second}
	var now time.Time
	quiet := false
	var durable, snapAt uint64
	runScript(t, "idle", func(t *testing.T, line string) []string {
		f := strings.Fields(line)
		switch f[0] {
		case "quiet":
			quiet = true
			if i.Quiet(now, len(f) == 1) == IdleGoNow {
				return []string{"go now"}
			}
			at, _ := i.Deadline()
			return []string{"wait until " + at.Sub(time.Time{}).String()}
		case "busy":
			quiet = false
		case "commit":
			fmt.Sscan(f[1], &durable)
		case "tick":
			d, err := time.ParseDuration(f[1])
			if err != nil {
				t.Fatal(err)
			}
			now = now.Add(d)
			if i.Tick(now, quiet) {
				s := "unload"
				if FinalSnapshot(true, durable, snapAt) {
					s += " + snapshot"
					snapAt = durable
				}
				return []string{s}
			}
		default:
			t.Fatalf("unknown command %q", line)
		}
		return nil
	})
}
