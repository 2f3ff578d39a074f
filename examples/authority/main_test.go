package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weftgate/weftgate/bridge/client"
	"go.uber.org/goleak"
)

// The authority, its client and the test gateways leave no goroutine.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParse(t *testing.T) {
	env := func(k string) string {
		if k == "WEFTGATE_GRPC_TOKEN" {
			return "from-the-env-123456"
		}
		return ""
	}
	c, err := parse([]string{"-gateway", "10.0.0.1:9090", "-prefix", "board:", "-protect", "/admin/keys/", "-max-value-bytes", "10"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Gateway != "10.0.0.1:9090" || c.Prefix != "board:" || c.Token != "from-the-env-123456" ||
		!slices.Equal(c.Rules.Protected, []string{"admin", "keys"}) || c.Rules.MaxValueBytes != 10 || c.Rules.Role != "admin" {
		t.Fatalf("config = %+v", c)
	}
	if c, _ := parse([]string{"-protect", ""}, env, io.Discard); c.Rules.Protected != nil {
		t.Fatalf("an empty -protect protects %v", c.Rules.Protected)
	}
	for _, bad := range [][]string{{"-max-value-bytes", "-1"}, {"-data", ""}, {"extra"}, {"-nope"}} {
		if _, err := parse(bad, env, io.Discard); err == nil {
			t.Errorf("parse(%q) succeeded", bad)
		}
	}
}

func TestSessions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.json")
	os.WriteFile(path, []byte(`{"s3cret": {"id": "alice", "roles": ["admin"]}}`), 0o644)
	s, err := loadSessions(path)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(cookie string) (*client.Identity, []client.Reason) {
		h := http.Header{}
		if cookie != "" {
			h.Set("Cookie", cookie)
		}
		who, rs, err := s.Identify(t.Context(), client.IdentifyQuestion{Handshake: client.Handshake{Header: h}})
		if err != nil {
			t.Fatal(err)
		}
		return who, rs
	}
	if who, rs := ask("other=1; session=s3cret"); rs != nil || who.ID != "alice" || !who.HasRole("admin") {
		t.Fatalf("a known session: %+v %v", who, rs)
	}
	if who, rs := ask(""); who != nil || rs != nil {
		t.Fatalf("no cookie: %+v %v, want anonymous", who, rs)
	}
	if _, rs := ask("session=guess"); len(rs) != 1 || rs[0].Code != ReasonUnknownSession {
		t.Fatalf("an unknown session: %v", rs)
	}
	os.WriteFile(path, []byte(`{"x": {"roles": []}}`), 0o644)
	if _, err := loadSessions(path); err == nil {
		t.Fatal("a session with no id loaded")
	}
}
