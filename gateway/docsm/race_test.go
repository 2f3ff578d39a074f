package docsm

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRaceTranscripts walks testdata/race.txt: one lost race's wait, with
// a clock at 0 that moves only by tick. The wait is 200 ms.
//
//	lost N         the append after durable cursor N lost: "wait until D"
//	progress N     the durable cursor is N after an input: "decide" or nothing
//	progress N p   the same, with records still to apply
//	tick D         move the clock: "read" when the wait is over
//	end            a read or a resync ended the wait
//	state          whether decisions are held
func TestRaceTranscripts(t *testing.T) {
	var r Race
	var now time.Time
	step := func(s RaceStep) []string {
		switch s {
		case RaceDecide:
			return []string{"decide"}
		case RaceRead:
			return []string{"read"}
		}
		return nil
	}
	runScript(t, "race", func(t *testing.T, line string) []string {
		f := strings.Fields(line)
		switch f[0] {
		case "lost":
			dl := r.Lost(uint64(atoi(t, f[1])), now, 200*time.Millisecond)
			return []string{"wait until " + dl.Sub(time.Time{}).String()}
		case "progress":
			return step(r.Progress(uint64(atoi(t, f[1])), len(f) > 2))
		case "tick":
			d, err := time.ParseDuration(f[1])
			if err != nil {
				t.Fatal(err)
			}
			now = now.Add(d)
			return step(r.Tick(now))
		case "end":
			r.End()
		case "state":
			return []string{fmt.Sprintf("holding %v", r.Waiting())}
		default:
			t.Fatalf("unknown command %q", line)
		}
		return nil
	})
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
