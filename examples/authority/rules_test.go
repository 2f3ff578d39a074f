package main

import (
	"context"
	"strings"
	"testing"

	"github.com/weftgate/weftgate/bridge/client"
	"github.com/weftgate/weftgate/protocol/commit"
)

var root = commit.ID{1}

func question(origin client.Origin, deltas []commit.Delta, paths [][]string) client.AcceptQuestion {
	return client.AcceptQuestion{Document: "d", Origin: origin, CommitView: client.CommitView{Commit: commit.Commit{Deltas: deltas}, Paths: paths}}
}

func peerWith(roles ...string) client.Origin {
	return client.Origin{Peer: &client.Peer{Identity: client.Identity{ID: "u", Roles: roles}}}
}

func text(key, s string) commit.Delta {
	return commit.Delta{Op: commit.Add, ID: root, Ref: commit.ObjectKey(key), Value: commit.TextValue(s)}
}

func codes(rs []client.Reason) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Code+"@"+strings.Join(r.Path, "/"))
	}
	return strings.Join(out, " ")
}

func TestRules(t *testing.T) {
	rules := Rules{Protected: []string{"admin"}, Role: "admin", MaxValueBytes: 8}
	big := strings.Repeat("x", 9)
	remove := commit.Delta{Op: commit.Remove, ID: root, Ref: commit.ObjectKey("admin")}
	bytesDelta := commit.Delta{Op: commit.Add, ID: root, Ref: commit.ObjectKey("blob"), Value: commit.BytesValue([]byte(big))}
	intDelta := commit.Delta{Op: commit.Add, ID: root, Ref: commit.ObjectKey("n"), Value: commit.IntValue(1 << 40)}
	for _, tc := range []struct {
		name   string
		rules  Rules
		origin client.Origin
		deltas []commit.Delta
		paths  [][]string
		want   string
	}{
		{"plain write", rules, peerWith(), []commit.Delta{text("title", "hi")}, [][]string{{"title"}}, ""},
		{"under admin", rules, peerWith("editor"), []commit.Delta{text("admin", "x")}, [][]string{{"admin"}}, "forbidden@admin"},
		{"deep under admin", rules, peerWith(), []commit.Delta{text("k", "x")}, [][]string{{"admin", "users", "k"}}, "forbidden@admin/users/k"},
		{"a remove under admin", rules, peerWith(), []commit.Delta{remove}, [][]string{{"admin"}}, "forbidden@admin"},
		{"a look-alike key", rules, peerWith(), []commit.Delta{text("administrator", "x")}, [][]string{{"administrator"}}, ""},
		{"with the role", rules, peerWith("admin"), []commit.Delta{text("admin", "x")}, [][]string{{"admin"}}, ""},
		{"a backend", rules, client.Origin{Backend: &client.BackendOrigin{Name: "b"}}, []commit.Delta{text("admin", "x")}, [][]string{{"admin"}}, ""},
		{"no path is not under admin", rules, peerWith(), []commit.Delta{text("k", "x")}, [][]string{nil}, ""},
		{"big text", rules, peerWith("admin"), []commit.Delta{text("title", big)}, [][]string{{"title"}}, "value-too-large@title"},
		{"big bytes", rules, peerWith(), []commit.Delta{bytesDelta}, [][]string{{"blob"}}, "value-too-large@blob"},
		{"a backend's big text", rules, client.Origin{Backend: &client.BackendOrigin{}}, []commit.Delta{text("t", big)}, [][]string{{"t"}}, "value-too-large@t"},
		{"numbers have no size", rules, peerWith(), []commit.Delta{intDelta}, [][]string{{"n"}}, ""},
		{"exactly the bound", rules, peerWith(), []commit.Delta{text("t", big[:8])}, [][]string{{"t"}}, ""},
		{"both rules", rules, peerWith(), []commit.Delta{text("admin", big), text("ok", "x")}, [][]string{{"admin"}, {"ok"}}, "forbidden@admin value-too-large@admin"},
		{"no rules", Rules{}, peerWith(), []commit.Delta{text("admin", big)}, [][]string{{"admin"}}, ""},
	} {
		got, err := tc.rules.Accept(context.Background(), question(tc.origin, tc.deltas, tc.paths))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s := codes(got); s != tc.want {
			t.Errorf("%s: refused %q, want %q", tc.name, s, tc.want)
		}
	}
}

// A refusal's message says what was needed.
func TestRulesMessages(t *testing.T) {
	rules := Rules{Protected: []string{"admin", "keys"}, Role: "owner", MaxValueBytes: 2}
	got, _ := rules.Accept(context.Background(), question(peerWith(), []commit.Delta{text("k", "long")}, [][]string{{"admin", "keys", "k"}}))
	if len(got) != 2 || got[0].Message != `writing under /admin/keys needs the role "owner"` || got[1].Message != "a 4-byte value is over the 2-byte bound" {
		t.Fatalf("reasons = %+v", got)
	}
}
