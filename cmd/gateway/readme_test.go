package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// README.md promises operators a table of every setting, every metric and
// every reason code; these tests keep that promise as the code moves.

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// settingRow is a setting's line in the README table.
func settingRow(f *flag.Flag) string {
	_, usage := flag.UnquoteUsage(f)
	def := ""
	if f.DefValue != "" {
		def = "`" + f.DefValue + "`"
	}
	return "| `-" + f.Name + "` | `" + envName(f.Name) + "` | " + def + " | " + strings.ReplaceAll(usage, "|", `\|`) + " |"
}

func TestREADMEListsEverySetting(t *testing.T) {
	text := readme(t)
	p, err := parseSettings(nil, envOf(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	stale := false
	p.fs.VisitAll(func(f *flag.Flag) {
		row := settingRow(f)
		table.WriteString(row + "\n")
		if !strings.Contains(text, row+"\n") {
			t.Errorf("README.md lacks the row\n%s", row)
			stale = true
		}
	})
	if stale {
		t.Logf("the settings table should read:\n%s", table.String())
	}
}

func TestREADMEListsEveryMetric(t *testing.T) {
	text := readme(t)
	ch := make(chan *prometheus.Desc, 64)
	(&gatewayCollector{}).Describe(ch)
	obs := newObservers()
	obs.authority.Describe(ch)
	obs.storeSync.Describe(ch)
	close(ch)
	name := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	n := 0
	for d := range ch {
		m := name.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		n++
		if !strings.Contains(text, "`"+m[1]+"`") {
			t.Errorf("README.md does not list the metric %s", m[1])
		}
	}
	if n < 20 {
		t.Fatalf("described %d metrics; the collector lost some", n)
	}
}

// TestREADMEListsEveryReason reads the reason constants out of the source
// (protocol, the gateway, its door and its request channel) and looks for
// each in README.md.
func TestREADMEListsEveryReason(t *testing.T) {
	text := readme(t)
	root := filepath.Join("..", "..")
	var files []string
	for _, glob := range []string{"protocol/reason.go", "gateway/*.go", "gateway/admission/*.go", "gateway/requests/reasons.go"} {
		m, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	constant := regexp.MustCompile(`(?m)^\s*(?:const\s+)?[A-Z][A-Za-z0-9]*\s+(?:(?:protocol\.)?Reason\s+)?=\s+"([a-z0-9-]+)"`)
	found := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || strings.HasSuffix(f, "status.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		if !strings.Contains(src, "Reason") {
			continue
		}
		for _, m := range constant.FindAllStringSubmatch(src, -1) {
			found[m[1]] = true
		}
	}
	if len(found) < 40 {
		t.Fatalf("found %d reason codes in the source; the pattern lost some", len(found))
	}
	for code := range found {
		if !strings.Contains(text, "`"+code+"`") {
			t.Errorf("README.md does not list the reason %s", code)
		}
	}
}
