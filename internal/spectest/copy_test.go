package spectest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type entry struct {
	File   string `json:"file"`
	Status string `json:"status"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
	Commit string `json:"commit"`
}

// The in-repo copy must be the published bytes: every file under
// testdata/aweft/spec matches manifest.json's length and sha256, and every
// current JSON fixture and frame the manifest lists is there.
func TestCopyMatchesManifest(t *testing.T) {
	root := CopyDir(t)
	raw, err := os.ReadFile(filepath.Join(root, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m []entry
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	byFile := map[string]entry{}
	for _, e := range m {
		byFile[e.File] = e
	}

	seen := map[string]bool{}
	err = filepath.WalkDir(filepath.Join(root, "spec"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		seen[rel] = true
		e, ok := byFile[rel]
		if !ok {
			t.Errorf("%s: not in manifest.json", rel)
			return nil
		}
		if e.Status != "current" {
			t.Errorf("%s: manifest says %q, want current", rel, e.Status)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != e.SHA256 || len(b) != e.Bytes {
			t.Errorf("%s: %d bytes sha256 %s, manifest says %d bytes sha256 %s (commit %s)", rel, len(b), got, e.Bytes, e.SHA256, e.Commit)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	want := 0
	for _, e := range m {
		if e.Status != "current" || !strings.HasSuffix(e.File, ".json") ||
			!(strings.HasPrefix(e.File, "spec/fixtures/") || strings.HasPrefix(e.File, "spec/frames/")) {
			continue
		}
		want++
		if !seen[e.File] {
			t.Errorf("%s: listed in manifest.json but missing from the copy", e.File)
		}
	}
	// 16 commit fixtures, 38 rejections, 30 frames (INDEX.md).
	if want != 84 {
		t.Errorf("manifest lists %d current JSON fixtures and frames, want 84", want)
	}
}

// Dir honours WEFTGATE_SPEC, so a newer corpus can be tested against.
func TestDirFollowsEnv(t *testing.T) {
	other := t.TempDir()
	t.Setenv("WEFTGATE_SPEC", other)
	if got := Dir(t); got != other {
		t.Fatalf("Dir = %s, want %s", got, other)
	}
}
