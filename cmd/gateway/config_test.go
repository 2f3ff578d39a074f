package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftgate/weftgate/gateway/store"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// parseAndValidate is what run does before serving.
func parseAndValidate(args []string, env map[string]string) (*parsed, *resolved, error) {
	p, err := parseSettings(args, envOf(env), io.Discard)
	if err != nil {
		return nil, nil, err
	}
	r, err := p.validate()
	return p, r, err
}

func TestSettings(t *testing.T) {
	dir := t.TempDir()
	cert, key, _ := testCert(t, dir)
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")

	tests := []struct {
		name string
		args []string
		env  map[string]string
		// wantErr, when set, must appear in the error (the setting's name,
		// and where its value came from).
		wantErr []string
		check   func(t *testing.T, p *parsed, r *resolved)
	}{
		{
			name: "defaults",
			check: func(t *testing.T, p *parsed, r *resolved) {
				s := p.s
				if s.WSAddr != "127.0.0.1:8080" || s.GRPCAddr != "127.0.0.1:9090" || s.Store != storeBolt || s.DataDir != "data" {
					t.Errorf("defaults: ws %q grpc %q store %q data %q", s.WSAddr, s.GRPCAddr, s.Store, s.DataDir)
				}
				if !slices.Equal(s.WSPaths, []string{"/", "/ws"}) {
					t.Errorf("ws-paths %v", s.WSPaths)
				}
				if r.wsTLS != nil || r.grpcTLS != nil {
					t.Error("TLS on by default")
				}
				g := s.gateway(nil, nil, nil)
				if g.JudgeTimeout != 5*time.Second || g.PingInterval != 30*time.Second || g.MaxMessageBytes != 1<<20 {
					t.Errorf("gateway config %+v", g)
				}
				if o := s.storeOptions(nil); o.Retain != store.DefaultRetain {
					t.Errorf("store retain %d", o.Retain)
				}
				if p.source["ws-addr"] != fromDefault {
					t.Errorf("source %v", p.source["ws-addr"])
				}
			},
		},
		{
			name: "environment fills what flags leave",
			env:  map[string]string{"WEFTGATE_WS_ADDR": "127.0.0.1:1", "WEFTGATE_COMPRESSION": "true", "WEFTGATE_JUDGE_TIMEOUT": "2s"},
			check: func(t *testing.T, p *parsed, _ *resolved) {
				if p.s.WSAddr != "127.0.0.1:1" || !p.s.Compression || p.s.JudgeTimeout != 2*time.Second {
					t.Errorf("got %q %v %v", p.s.WSAddr, p.s.Compression, p.s.JudgeTimeout)
				}
				if p.source["ws-addr"] != fromEnv {
					t.Errorf("source %v", p.source["ws-addr"])
				}
			},
		},
		{
			name: "flag wins over environment",
			args: []string{"-ws-addr", "127.0.0.1:2"},
			env:  map[string]string{"WEFTGATE_WS_ADDR": "127.0.0.1:1"},
			check: func(t *testing.T, p *parsed, _ *resolved) {
				if p.s.WSAddr != "127.0.0.1:2" || p.source["ws-addr"] != fromFlag {
					t.Errorf("got %q from %v", p.s.WSAddr, p.source["ws-addr"])
				}
			},
		},
		{
			name: "empty variable counts as unset",
			env:  map[string]string{"WEFTGATE_MAX_SLOTS": ""},
			check: func(t *testing.T, p *parsed, _ *resolved) {
				if p.s.MaxSlots <= 0 || p.source["max-slots"] != fromDefault {
					t.Errorf("max-slots %d from %v", p.s.MaxSlots, p.source["max-slots"])
				}
			},
		},
		{
			name: "lists split on commas and replace the default",
			env:  map[string]string{"WEFTGATE_ALLOWED_ORIGINS": "https://a.example, https://b.example:8443"},
			args: []string{"-ws-paths", "/aweft"},
			check: func(t *testing.T, p *parsed, _ *resolved) {
				if !slices.Equal(p.s.AllowedOrigins, []string{"https://a.example", "https://b.example:8443"}) {
					t.Errorf("origins %q", p.s.AllowedOrigins)
				}
				if !slices.Equal(p.s.WSPaths, []string{"/aweft"}) {
					t.Errorf("paths %q", p.s.WSPaths)
				}
			},
		},
		{
			name: "zero turns ping, rate limit and retention limits off",
			args: []string{"-ping-interval", "0", "-rate-limit", "0", "-store-retain", "0"},
			check: func(t *testing.T, p *parsed, _ *resolved) {
				if g := p.s.gateway(nil, nil, nil); g.PingInterval >= 0 {
					t.Errorf("ping interval %v, want negative (off)", g.PingInterval)
				}
				if a := p.s.admission(); a.Limit >= 0 {
					t.Errorf("rate limit %d, want negative (off)", a.Limit)
				}
				if o := p.s.storeOptions(nil); o.Retain >= 0 {
					t.Errorf("retain %d, want negative (keep all)", o.Retain)
				}
			},
		},
		{
			name: "separate admin listener frees the operator paths",
			args: []string{"-admin-addr", "127.0.0.1:0", "-ws-paths", "/status"},
		},
		{
			name: "TLS for WebSocket and mutual TLS for gRPC",
			args: []string{"-tls-cert", cert, "-tls-key", key, "-grpc-tls-cert", cert, "-grpc-tls-key", key, "-grpc-client-ca", cert},
			check: func(t *testing.T, _ *parsed, r *resolved) {
				if r.wsTLS == nil || r.wsTLS.GetCertificate == nil || r.certs["tls-cert"] == nil || r.certs["grpc-tls-cert"] == nil {
					t.Fatal("WebSocket TLS not loaded")
				}
				if c, err := r.wsTLS.GetCertificate(nil); err != nil || c.Leaf == nil || c.Leaf.Subject.CommonName != "weftgate test" {
					t.Fatalf("WebSocket TLS serves %v, %v", c, err)
				}
				if r.grpcTLS == nil || r.grpcTLS.ClientAuth != tls.RequireAndVerifyClientCert || r.grpcTLS.ClientCAs == nil {
					t.Fatalf("gRPC mutual TLS not set: %+v", r.grpcTLS)
				}
			},
		},
		{
			name: "memory store needs no data dir",
			args: []string{"-store", "memory", "-data-dir", ""},
		},

		{name: "bad flag value", args: []string{"-judge-timeout", "soon"}, wantErr: []string{"-judge-timeout"}},
		{name: "bad variable", env: map[string]string{"WEFTGATE_MAX_SLOTS": "many"}, wantErr: []string{"-max-slots", "WEFTGATE_MAX_SLOTS"}},
		{name: "unknown flag", args: []string{"-no-such-setting"}, wantErr: []string{"no-such-setting"}},
		{name: "stray argument", args: []string{"-read-only", "now"}, wantErr: []string{`"now"`}},
		{name: "address without port", args: []string{"-ws-addr", "localhost"}, wantErr: []string{"-ws-addr", "missing port"}},
		{name: "port out of range", env: map[string]string{"WEFTGATE_GRPC_ADDR": "127.0.0.1:70000"}, wantErr: []string{"-grpc-addr", "WEFTGATE_GRPC_ADDR", "65535"}},
		{name: "empty address", args: []string{"-grpc-addr", ""}, wantErr: []string{"-grpc-addr", "required"}},
		{name: "bad admin address", args: []string{"-admin-addr", "nope"}, wantErr: []string{"-admin-addr"}},
		{name: "profiles without an admin listener", args: []string{"-pprof"}, wantErr: []string{"-pprof", "-admin-addr"}},
		{name: "negative duration", args: []string{"-write-timeout", "-1s"}, wantErr: []string{"-write-timeout", "positive"}},
		{name: "zero duration", args: []string{"-drain-timeout", "0s"}, wantErr: []string{"-drain-timeout", "positive"}},
		{name: "negative ping interval", args: []string{"-ping-interval", "-5s"}, wantErr: []string{"-ping-interval", "negative"}},
		{name: "zero bound", args: []string{"-max-pending-bytes", "0"}, wantErr: []string{"-max-pending-bytes", "positive"}},
		{name: "commit bigger than the store keeps", args: []string{"-max-commit-bytes", "8388608"}, wantErr: []string{"-max-commit-bytes", "store"}},
		{name: "negative retention", args: []string{"-store-retain", "-1"}, wantErr: []string{"-store-retain", "negative"}},
		{name: "path without slash", args: []string{"-ws-paths", "ws"}, wantErr: []string{"-ws-paths", "start with /"}},
		{name: "path taken by an operator endpoint", args: []string{"-ws-paths", "/,/metrics"}, wantErr: []string{"-ws-paths", "/metrics"}},
		{name: "no path", args: []string{"-ws-paths", ","}, wantErr: []string{"-ws-paths"}},
		{name: "unknown store", args: []string{"-store", "redis"}, wantErr: []string{"-store", "bolt, memory"}},
		{name: "bolt store needs a data dir", args: []string{"-data-dir", " "}, wantErr: []string{"-data-dir"}},
		{name: "unknown log level", args: []string{"-log-level", "loud"}, wantErr: []string{"-log-level"}},
		{name: "unknown log format", args: []string{"-log-format", "xml"}, wantErr: []string{"-log-format"}},
		{name: "malformed origin", args: []string{"-allowed-origins", "app.example.com"}, wantErr: []string{"-allowed-origins", "app.example.com"}},
		{name: "certificate without key", args: []string{"-tls-cert", cert}, wantErr: []string{"-tls-key", "required"}},
		{name: "key without certificate", args: []string{"-grpc-tls-key", key}, wantErr: []string{"-grpc-tls-cert", "required"}},
		{name: "missing certificate file", args: []string{"-tls-cert", missing, "-tls-key", key}, wantErr: []string{"-tls-cert", "no such file"}},
		{name: "certificate that does not load", args: []string{"-tls-cert", notPEM, "-tls-key", key}, wantErr: []string{"-tls-cert"}},
		{name: "client CA without server TLS", args: []string{"-grpc-client-ca", cert}, wantErr: []string{"-grpc-client-ca", "-grpc-tls-cert"}},
		{name: "client CA that holds no certificate", args: []string{"-grpc-tls-cert", cert, "-grpc-tls-key", key, "-grpc-client-ca", notPEM}, wantErr: []string{"-grpc-client-ca", "no PEM"}},
		{name: "short token", env: map[string]string{"WEFTGATE_GRPC_TOKEN": "abc"}, wantErr: []string{"-grpc-token", "WEFTGATE_GRPC_TOKEN", redacted}},
		{name: "public gRPC without authentication", args: []string{"-grpc-addr", "0.0.0.0:9090"}, wantErr: []string{"-grpc-addr", "not on loopback", "-insecure-grpc"}},
		{name: "gRPC on every interface without authentication", env: map[string]string{"WEFTGATE_GRPC_ADDR": ":9090"}, wantErr: []string{"-grpc-addr", "WEFTGATE_GRPC_ADDR", "-grpc-token"}},
		{name: "public gRPC with a token", args: []string{"-grpc-addr", "0.0.0.0:9090"}, env: map[string]string{"WEFTGATE_GRPC_TOKEN": "0123456789abcdef"}},
		{name: "public gRPC with mutual TLS", args: []string{"-grpc-addr", "10.1.2.3:9090", "-grpc-tls-cert", cert, "-grpc-tls-key", key, "-grpc-client-ca", cert}},
		{name: "public gRPC on purpose", args: []string{"-grpc-addr", "0.0.0.0:9090", "-insecure-grpc"}},
		{name: "gRPC on loopback by name and IPv6", args: []string{"-grpc-addr", "localhost:9090", "-admin-addr", "[::1]:9100"}},
		{name: "public admin listener", args: []string{"-admin-addr", "0.0.0.0:9100"}, wantErr: []string{"-admin-addr", "not on loopback", "-insecure-admin"}},
		{name: "public admin listener on purpose", args: []string{"-admin-addr", "0.0.0.0:9100", "-insecure-admin"}},
		{name: "token with whitespace", args: []string{"-grpc-token", "0123456789abcdef 0123"}, wantErr: []string{"-grpc-token", "whitespace"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, r, err := parseAndValidate(tc.args, tc.env)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if tc.check != nil {
					tc.check(t, p, r)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; want one naming %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestSecretsNeverInErrors(t *testing.T) {
	token := "short-secret"
	_, _, err := parseAndValidate([]string{"-grpc-token", token}, nil)
	if err == nil || strings.Contains(err.Error(), token) {
		t.Fatalf("error %v: want a refusal that hides the token", err)
	}
}

func TestHelpListsEverySetting(t *testing.T) {
	var out strings.Builder
	_, err := parseSettings([]string{"-h"}, envOf(nil), &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v, want flag.ErrHelp", err)
	}
	p, err := parseSettings(nil, envOf(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	p.fs.VisitAll(func(f *flag.Flag) {
		if !strings.Contains(text, "  -"+f.Name+" ") && !strings.Contains(text, "  -"+f.Name+"\n") {
			t.Errorf("usage lacks -%s", f.Name)
		}
		if !strings.Contains(text, "env "+envName(f.Name)) {
			t.Errorf("usage lacks %s", envName(f.Name))
		}
		if f.DefValue != "" && !strings.Contains(text, "default "+f.DefValue) {
			t.Errorf("usage lacks the default of -%s (%s)", f.Name, f.DefValue)
		}
	})
}

func TestEnvName(t *testing.T) {
	for flagName, want := range map[string]string{
		"ws-addr":                  "WEFTGATE_WS_ADDR",
		"grpc-client-ca":           "WEFTGATE_GRPC_CLIENT_CA",
		"max-pending-per-document": "WEFTGATE_MAX_PENDING_PER_DOCUMENT",
	} {
		if got := envName(flagName); got != want {
			t.Errorf("envName(%q) = %q, want %q", flagName, got, want)
		}
	}
}

func TestPrepareDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	p, _, err := parseAndValidate([]string{"-data-dir", dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.prepareDataDir(); err != nil {
		t.Fatalf("prepare %s: %v", dir, err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("data dir not created: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("probe left %d files behind", len(entries))
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p, _, err = parseAndValidate([]string{"-data-dir", filepath.Join(file, "sub")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.prepareDataDir(); err == nil || !strings.Contains(err.Error(), "-data-dir") {
		t.Fatalf("data dir under a file: err %v, want one naming -data-dir", err)
	}
}
