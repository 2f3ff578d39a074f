package link

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output in testdata/*.txt")

// A transcript is a file of blocks. Each block is comment lines (#), one or
// more command lines, a line "----", and the lines the commands must
// produce, up to a blank line. The link lives for the whole file; its
// outputs are drained once per block, so several commands in one block
// show batching.
type block struct {
	line     int // of the first command
	comments []string
	commands []string
	want     []string
}

func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts in testdata: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			runTranscript(t, file)
		})
	}
}

func runTranscript(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	blocks := parseTranscript(t, file, string(data))
	s := newScript()
	for i := range blocks {
		b := &blocks[i]
		var got []string
		for _, c := range b.commands {
			got = append(got, s.run(t, file, b.line, c)...)
		}
		got = append(got, s.drain()...)
		if *rewrite {
			b.want = got
			continue
		}
		if strings.Join(got, "\n") != strings.Join(b.want, "\n") {
			t.Errorf("%s:%d: %s\n--- got\n%s\n--- want\n%s", file, b.line,
				strings.Join(b.commands, "; "), strings.Join(got, "\n"), strings.Join(b.want, "\n"))
		}
	}
	if *rewrite {
		if err := os.WriteFile(file, []byte(formatTranscript(blocks)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func parseTranscript(t *testing.T, file, data string) []block {
	var blocks []block
	var b block
	inWant := false
	lines := strings.Split(strings.TrimRight(data, "\n"), "\n")
	for i, line := range lines {
		switch {
		case inWant && line == "":
			blocks, b, inWant = append(blocks, b), block{}, false
		case inWant:
			b.want = append(b.want, line)
		case line == "----":
			if len(b.commands) == 0 {
				t.Fatalf("%s:%d: ---- with no command above it", file, i+1)
			}
			inWant = true
		case strings.HasPrefix(line, "#"):
			if len(b.commands) > 0 {
				t.Fatalf("%s:%d: a comment between commands", file, i+1)
			}
			b.comments = append(b.comments, line)
		case line == "":
			if len(b.commands) > 0 {
				t.Fatalf("%s:%d: a command block without ----", file, i+1)
			}
			if len(b.comments) > 0 {
				b.comments = append(b.comments, "")
			}
		default:
			if len(b.commands) == 0 {
				b.line = i + 1
			}
			b.commands = append(b.commands, line)
		}
	}
	if inWant || len(b.commands) > 0 {
		if !inWant {
			t.Fatalf("%s: the last block has no ----", file)
		}
		blocks = append(blocks, b)
	}
	return blocks
}

func formatTranscript(blocks []block) string {
	var sb strings.Builder
	for i, b := range blocks {
		if i > 0 {
			sb.WriteString("\n")
		}
		for _, l := range append(append(append(b.comments, b.commands...), "----"), b.want...) {
			sb.WriteString(l + "\n")
		}
	}
	return sb.String()
}
