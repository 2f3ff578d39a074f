package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func runCLI(args []string, env map[string]string) (code int, stdout, stderr string) {
	var out, errOut strings.Builder
	code = run(args, envOf(env), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestConfigCommandPrintsEffectiveSettings(t *testing.T) {
	token := "0123456789abcdef-secret"
	code, out, errOut := runCLI(
		[]string{"config", "-ws-addr", "127.0.0.1:7000", "-judge-timeout", "3s"},
		map[string]string{"WEFTGATE_GRPC_TOKEN": token, "WEFTGATE_READ_ONLY": "true"},
	)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, token) {
		t.Fatal("config printed the token")
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	want := map[string]any{
		"ws-addr":       "127.0.0.1:7000",
		"judge-timeout": "3s",
		"read-only":     true,
		"grpc-token":    redacted,
		"grpc-addr":     defaultGRPCAddr,
		"max-slots":     float64(1_000_000),
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	p, err := parseSettings(nil, envOf(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if names := flagNames(p.fs); len(got) != len(names) {
		t.Errorf("config printed %d settings, there are %d", len(got), len(names))
	}
}

func TestCommands(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{args: []string{"version"}, code: exitOK, stdout: "weftgate "},
		{args: []string{"--version"}, code: exitOK, stdout: "weftgate "},
		{args: []string{"-version"}, code: exitOK, stdout: "weftgate "},
		{args: []string{"version", "extra"}, code: exitSettings, stderr: `version takes no arguments (got "extra")`},
		{args: []string{"--version", "-ws-addr", "x"}, code: exitSettings, stderr: "version takes no arguments"},
		{args: []string{"help"}, code: exitOK, stdout: "-ws-addr"},
		{args: []string{"-h"}, code: exitOK, stdout: "WEFTGATE_WS_ADDR"},
		{args: []string{"launch"}, code: exitSettings, stderr: `unknown command "launch"`},
		{args: []string{"config", "-max-topics-per-link", "-3"}, code: exitSettings, stderr: "-max-topics-per-link"},
		{args: []string{"-log-level", "chatty"}, code: exitSettings, stderr: "-log-level"},
		{args: []string{"-judge-timeout", "x"}, code: exitSettings, stderr: "-judge-timeout"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(tc.args, nil)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tc.code, errOut)
			}
			if !strings.Contains(out, tc.stdout) {
				t.Errorf("stdout %q lacks %q", out, tc.stdout)
			}
			if !strings.Contains(errOut, tc.stderr) {
				t.Errorf("stderr %q lacks %q", errOut, tc.stderr)
			}
			if tc.code != exitOK && out != "" {
				t.Errorf("a refused start printed to stdout:\n%s", out)
			}
		})
	}
}

// The image's settings (the Dockerfile's ENV) refuse to start without a
// gRPC token, naming it, and start with one.
func TestDockerImageSettingsNeedAToken(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue // the usage comment names the token too
		}
		for _, m := range regexp.MustCompile(`(WEFTGATE_[A-Z_]+)=(\S+)`).FindAllStringSubmatch(line, -1) {
			env[m[1]] = m[2]
		}
	}
	if env["WEFTGATE_GRPC_ADDR"] != "0.0.0.0:9090" || env["WEFTGATE_ADMIN_ADDR"] == "" {
		t.Fatalf("the Dockerfile's ENV is not what this test expects: %v", env)
	}
	env["WEFTGATE_DATA_DIR"] = t.TempDir()
	code, _, errOut := runCLI([]string{"config"}, env)
	if code != exitSettings || !strings.Contains(errOut, "-grpc-addr") || !strings.Contains(errOut, "-grpc-token") {
		t.Fatalf("the image without a token: exit %d, %s", code, errOut)
	}
	env["WEFTGATE_GRPC_TOKEN"] = "0123456789abcdef0123456789abcdef"
	if code, _, errOut := runCLI([]string{"config"}, env); code != exitOK {
		t.Fatalf("the image with a token: exit %d, %s", code, errOut)
	}
}
