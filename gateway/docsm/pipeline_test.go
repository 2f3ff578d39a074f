package docsm

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftgate/weftgate/protocol/frame"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output in testdata/*.txt")

// A transcript is blocks of comment lines (#), command lines, "----" and
// the lines the commands produce, up to a blank line. One pipeline (two
// questions in flight, a 5 s timeout) lives for the whole file; the clock
// starts at 0 and moves only by tick.
//
//	add a b      queue commits a and b
//	ask          ask what may be asked now: "? a" each
//	answer a ok  answer a's latest question (or "answer a no" to refuse);
//	             "answer a@1 ok" answers its first question; "late" when
//	             the answer is dropped
//	tick 5s      move the clock and time out what is past its deadline
//	stale a      a's paths moved: it will be asked again at its turn
//	decided      take the decided commits at the head: "= a accepted" each
//	requeue a b  a and b, accepted and applied, lost their append's race:
//	             back at the head, accepted
func TestPipelineTranscripts(t *testing.T) {
	runPipelineScript(t, filepath.Join("testdata", "pipeline.txt"))
}

type pipeScript struct {
	p       *Pipeline[string]
	now     time.Time
	tickets map[string][]Ticket[string] // every ask of each commit, in order
	stale   map[string]bool
}

func (s *pipeScript) run(t *testing.T, line string) []string {
	f := strings.Fields(line)
	var out []string
	switch f[0] {
	case "add":
		for _, it := range f[1:] {
			s.p.Add(it)
		}
	case "ask":
		for _, q := range s.p.Ask(s.now) {
			s.tickets[q.Item] = append(s.tickets[q.Item], q.Ticket)
			out = append(out, "? "+q.Item)
		}
	case "answer":
		name, nth, _ := strings.Cut(f[1], "@")
		ts := s.tickets[name]
		i := len(ts) - 1
		if nth != "" {
			fmt.Sscan(nth, &i)
			i--
		}
		v := Verdict{}
		if f[2] == "no" {
			v = Verdict{Reasons: []frame.Reason{{Code: "forbidden"}}}
		}
		if !s.p.Answer(ts[i], v) {
			out = append(out, "late "+f[1])
		}
	case "tick":
		d, err := time.ParseDuration(f[1])
		if err != nil {
			t.Fatal(err)
		}
		s.now = s.now.Add(d)
		if n := s.p.Expire(s.now); n > 0 {
			out = append(out, fmt.Sprintf("expired %d", n))
		}
	case "stale":
		s.stale[f[1]] = true
	case "decided":
		for {
			d, ok := s.p.Next(func(it string) bool { st := s.stale[it]; delete(s.stale, it); return st })
			if !ok {
				break
			}
			what := "accepted"
			if !d.Verdict.Accepted() {
				what = "refused " + d.Verdict.Reasons[0].Code
			}
			out = append(out, "= "+d.Item+" "+what)
		}
	case "state":
		at, ok := s.p.Deadline()
		dl := "none"
		if ok {
			dl = at.Sub(time.Time{}).String()
		}
		out = append(out, fmt.Sprintf("len %d in-flight %d deadline %s", s.p.Len(), s.p.InFlight(), dl))
	case "requeue":
		s.p.Requeue(f[1:], Verdict{})
	case "drain":
		out = append(out, "drained "+strings.Join(s.p.DrainAll(), " "))
	default:
		t.Fatalf("unknown command %q", line)
	}
	return out
}

func runPipelineScript(t *testing.T, file string) {
	s := &pipeScript{
		p:       NewPipeline[string](PipelineConfig{MaxInFlight: 2, Timeout: 5 * time.Second, TimedOut: Verdict{Reasons: []frame.Reason{{Code: "authority-timeout"}}}}),
		tickets: map[string][]Ticket[string]{},
		stale:   map[string]bool{},
	}
	runFile(t, file, s.run)
}

// runScript runs every testdata/<prefix>*.txt through step, each file with
// the state step closes over as it stands (one file per prefix keeps them
// apart).
func runScript(t *testing.T, prefix string, step func(*testing.T, string) []string) {
	files, err := filepath.Glob(filepath.Join("testdata", prefix+"*.txt"))
	if err != nil || len(files) != 1 {
		t.Fatalf("want one transcript testdata/%s*.txt: %v %v", prefix, files, err)
	}
	runFile(t, files[0], step)
}

// runFile runs one transcript: blocks of comment lines (#), command lines,
// "----" and the lines the commands produce, up to a blank line. With
// -rewrite it writes what the commands produced as the expectation.
func runFile(t *testing.T, file string, step func(*testing.T, string) []string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var got, want []string
	inWant, changed := false, false
	flush := func() {
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			if !*rewrite {
				t.Errorf("%s: got\n%s\nwant\n%s", file, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			changed = true
		}
		for _, l := range got {
			b.WriteString(l + "\n")
		}
		b.WriteString("\n")
		got, want, inWant = nil, nil, false
	}
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		switch {
		case inWant && line == "":
			flush()
		case inWant:
			want = append(want, line)
		case line == "----":
			inWant = true
			b.WriteString(line + "\n")
		case line == "" || strings.HasPrefix(line, "#"):
			b.WriteString(line + "\n")
		default:
			b.WriteString(line + "\n")
			got = append(got, step(t, line)...)
		}
	}
	if inWant {
		flush()
	}
	if *rewrite && changed {
		if err := os.WriteFile(file, []byte(strings.TrimRight(b.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
