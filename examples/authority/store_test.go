package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftgate/weftgate/bridge/client"
	"github.com/weftgate/weftgate/protocol/commit"
)

func TestFileNames(t *testing.T) {
	names := []string{"board:1", "a/b", "../x", "..", ".", "a.json", "a%2Fb", "", "ünï", "A-z_0"}
	seen := map[string]string{}
	for _, n := range names {
		f := fileName(n)
		if strings.ContainsAny(strings.TrimSuffix(f, ".json"), "/.\\:") || filepath.Base(f) != f {
			t.Errorf("fileName(%q) = %q: not one plain file name", n, f)
		}
		if other, dup := seen[f]; dup {
			t.Errorf("%q and %q share the file %q", n, other, f)
		}
		seen[f] = n
		back, err := unescape(strings.TrimSuffix(f, ".json"))
		if err != nil || back != n {
			t.Errorf("unescape(%q) = %q, %v; want %q", f, back, err, n)
		}
	}
	if f := fileName("A-z_0"); f != "A-z_0.json" {
		t.Errorf("a plain name was escaped: %q", f)
	}
	for _, bad := range []string{"%", "%2", "%zz", "%41" /* "A", which is never escaped */} {
		if _, err := unescape(bad); err == nil {
			t.Errorf("unescape(%q) succeeded", bad)
		}
	}
}

func TestStoreRoundTrip(t *testing.T) {
	s := dirStore{dir: t.TempDir()}
	if l, err := s.Load("none"); l != nil || err != nil {
		t.Fatalf("a missing document = %v, %v", l, err)
	}
	child := commit.ID{9}
	st := client.State{Root: client.Root{ID: root, Kind: commit.Object}, Commit: commit.Commit{Deltas: []commit.Delta{
		text("title", "plan"),
		{Op: commit.Add, ID: root, Ref: commit.ObjectKey("list"), Value: commit.RefTo(commit.Reference{Edge: commit.Attach, Kind: commit.Array, ID: child})},
		{Op: commit.Add, ID: child, Ref: commit.ArrayKey([]byte{0x80}), Value: commit.FloatValue(1.5)},
		{Op: commit.Add, ID: child, Ref: commit.ArrayKey([]byte{0x90}), Value: commit.BytesValue([]byte{0, 1, 2})},
		{Op: commit.Add, ID: root, Ref: commit.ObjectKey("n"), Value: commit.IntValue(-7)},
		{Op: commit.Add, ID: root, Ref: commit.ObjectKey("z"), Value: commit.NullValue()},
	}}}
	if err := s.Save("board:1", st, 12); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("board:1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Cursor != 12 || got.State.Root != st.Root || len(got.State.Commit.Deltas) != len(st.Commit.Deltas) {
		t.Fatalf("loaded %+v", got)
	}
	for i, d := range st.Commit.Deltas {
		if got.State.Commit.Deltas[i] != d {
			t.Errorf("delta %d: %+v, want %+v", i, got.State.Commit.Deltas[i], d)
		}
	}
	if err := s.Save("empty", client.State{Root: client.Root{ID: root, Kind: commit.Map}}, 0); err != nil {
		t.Fatal(err)
	}
	if e, err := s.Load("empty"); err != nil || len(e.State.Commit.Deltas) != 0 || e.State.Root.Kind != commit.Map {
		t.Fatalf("empty document = %+v, %v", e, err)
	}
	os.WriteFile(filepath.Join(s.dir, "notes.txt"), []byte("not ours"), 0o644)
	os.WriteFile(filepath.Join(s.dir, "%41.json"), []byte("{}"), 0o644)
	cur, err := s.Cursors()
	if err != nil || len(cur) != 2 || cur["board:1"] != 12 || cur["empty"] != 0 {
		t.Fatalf("Cursors = %v, %v", cur, err)
	}
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp") {
			t.Errorf("a temporary file was left: %s", e.Name())
		}
	}
}

func TestStoreRefusesBadFiles(t *testing.T) {
	s := dirStore{dir: t.TempDir()}
	if err := s.Save("a", client.State{Root: client.Root{ID: root}}, 1); err != nil {
		t.Fatal(err)
	}
	// A file renamed by hand holds another document.
	os.Rename(s.path("a"), s.path("b"))
	if _, err := s.Load("b"); err == nil || !strings.Contains(err.Error(), `holds "a"`) {
		t.Fatalf("a misplaced file: %v", err)
	}
	os.WriteFile(s.path("c"), []byte("{broken"), 0o644)
	if _, err := s.Load("c"); err == nil {
		t.Fatal("a broken file loaded")
	}
	// A file over the bound is refused without being read (sparse here).
	if err := os.Truncate(s.path("b"), MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("b"); err == nil || !strings.Contains(err.Error(), "bound") {
		t.Fatalf("an oversized file: %v", err)
	}
}
