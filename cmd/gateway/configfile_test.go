package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// A config file sets what neither a flag nor the environment does.
func TestConfigFileUnderEnvironmentAndFlags(t *testing.T) {
	f := writeConfig(t, `
ws-addr: 127.0.0.1:7001      # a flag overrides it
judge-timeout: 3s            # the environment overrides it
allowed-origins: [https://a.example, https://b.example]
read-only: true
max-slots: 12345
`)
	p, _, err := parseAndValidate([]string{"-config", f, "-ws-addr", "127.0.0.1:7002"}, map[string]string{"WEFTGATE_JUDGE_TIMEOUT": "4s"})
	if err != nil {
		t.Fatal(err)
	}
	s := p.s
	if s.WSAddr != "127.0.0.1:7002" || s.JudgeTimeout != 4*time.Second || !s.ReadOnly || s.MaxSlots != 12345 ||
		!slices.Equal(s.AllowedOrigins, []string{"https://a.example", "https://b.example"}) {
		t.Fatalf("settings %+v", s)
	}
	for name, want := range map[string]source{"ws-addr": fromFlag, "judge-timeout": fromEnv, "read-only": fromFile, "grpc-addr": fromDefault} {
		if p.source[name] != want {
			t.Errorf("%s from %v, want %v", name, p.source[name], want)
		}
	}
	// The environment may name the file too.
	p, _, err = parseAndValidate(nil, map[string]string{"WEFTGATE_CONFIG": f})
	if err != nil || p.s.MaxSlots != 12345 {
		t.Fatalf("WEFTGATE_CONFIG: %v %d", err, p.s.MaxSlots)
	}
	if _, _, err := parseAndValidate([]string{"-config", writeConfig(t, "# nothing set\n")}, nil); err != nil {
		t.Fatalf("an empty file: %v", err)
	}
}

func TestConfigFileErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"ws-adr: 127.0.0.1:1\n", []string{"-config", "line 1", `unknown setting "ws-adr"`}},
		{"config: other.yaml\n", []string{"line 1", `unknown setting "config"`}},
		{"max-slots: 1\nmax-slots: 2\n", []string{"line 2", "max-slots is set twice"}},
		{"judge-timeout: soon\n", []string{"-judge-timeout", "line 1", "gateway.yaml"}},
		{"\n\nmax-deltas: -4\n", []string{"-max-deltas", "gateway.yaml line 3", "must be positive"}},
		{"ws-addr:\n", []string{"line 1", "ws-addr: has no value"}},
		{"ws-addr: {host: x}\n", []string{"ws-addr: takes a plain value"}},
		{"ws-addr: [a, b]\n", []string{"ws-addr: takes one value, not a list"}},
		{"- ws-addr\n", []string{"want a mapping"}},
		{"ws-addr: [unclosed\n", []string{"-config"}},
		{"question-timeout: 10s\njudge-timeout: 5s\n", []string{"-question-timeout", "gateway.yaml line 1", "-judge-timeout"}},
	} {
		_, _, err := parseAndValidate([]string{"-config", writeConfig(t, tc.text)}, nil)
		if err == nil {
			t.Errorf("%q: no error", tc.text)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", tc.text, err, w)
			}
		}
	}
	_, _, err := parseAndValidate([]string{"-config", filepath.Join(t.TempDir(), "missing.yaml")}, nil)
	if err == nil || !strings.Contains(err.Error(), "-config") {
		t.Errorf("a missing file: %v", err)
	}
}

// `gateway config` shows the values in effect after every adjustment, and
// fails, exit 2, whatever would fail a start before it binds.
func TestConfigCommandShowsAdjustmentsAndFailsAsStartWould(t *testing.T) {
	effective := func(args ...string) map[string]any {
		t.Helper()
		code, out, errOut := runCLI(append([]string{"config"}, args...), nil)
		if code != exitOK {
			t.Fatalf("config %v: exit %d: %s", args, code, errOut)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	small := effective("-max-message-bytes", "1000")
	if got := small["max-commit-bytes"]; got != float64(936) {
		t.Errorf("max-commit-bytes %v under -max-message-bytes 1000, want 936", got)
	}
	if got := small["max-document-bytes"]; got != float64(936) {
		t.Errorf("max-document-bytes %v under -max-message-bytes 1000, want 936", got)
	}
	if got := effective("-judge-timeout", "1s")["question-timeout"]; got != "500ms" {
		t.Errorf("question-timeout %v under -judge-timeout 1s, want 500ms", got)
	}
	fresh := filepath.Join(t.TempDir(), "new", "data")
	effective("-data-dir", fresh)
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("config created the data directory (%v)", err)
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := [][]string{
		{"-question-timeout", "10s", "-judge-timeout", "5s"},
		{"-max-message-bytes", "1000", "-max-commit-bytes", "2000"},
		{"-max-message-bytes", "1000", "-max-document-bytes", "2000"},
		{"-drain-timeout", "1s", "-drain-spread", "2s"},
		{"-max-message-bytes", "64"},
		{"-data-dir", filepath.Join(file, "sub")},
	}
	if _, err := os.Stat("/proc/self"); err == nil {
		bad = append(bad, []string{"-data-dir", "/proc/x"})
	}
	for _, args := range bad {
		for _, cmd := range []string{"config", "serve"} {
			// Free ports: each of these must fail before anything binds.
			code, out, errOut := runCLI(append([]string{cmd, "-store", "bolt", "-ws-addr", "127.0.0.1:0", "-grpc-addr", "127.0.0.1:0"}, args...), nil)
			if code != exitSettings || out != "" {
				t.Errorf("%s %v: exit %d, stdout %q; want 2 and nothing", cmd, args, code, out)
			}
			if !strings.Contains(errOut, args[len(args)-2]) {
				t.Errorf("%s %v: %q does not name %s", cmd, args, errOut, args[len(args)-2])
			}
		}
	}
}
