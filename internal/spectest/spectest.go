package spectest

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// Dir returns the absolute path of the spec corpus (the directory holding
// fixtures/ and frames/), or fails t. WEFTGATE_SPEC overrides the in-repo copy.
func Dir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("WEFTGATE_SPEC"); d != "" {
		return mustDir(t, d)
	}
	return mustDir(t, filepath.Join(CopyDir(t), "spec"))
}

// CopyDir returns the absolute path of testdata/aweft, the in-repo copy with
// its manifest.json, whatever WEFTGATE_SPEC says.
func CopyDir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("spectest: %v", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return mustDir(t, filepath.Join(d, "testdata", "aweft"))
		}
		if filepath.Dir(d) == d {
			t.Fatalf("spectest: no go.mod above %s", wd)
		}
	}
}

func mustDir(t testing.TB, d string) string {
	t.Helper()
	abs, err := filepath.Abs(d)
	if err != nil {
		t.Fatalf("spectest: %v", err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		t.Fatalf("spectest: the aweft spec corpus is missing at %s (the repository keeps a copy in testdata/aweft/spec; WEFTGATE_SPEC=%q)", abs, os.Getenv("WEFTGATE_SPEC"))
	}
	return abs
}

// Files returns the sorted *.json files directly inside Dir()/sub, failing t
// when there are none.
func Files(t testing.TB, sub string) []string {
	t.Helper()
	dir := filepath.Join(Dir(t), sub)
	m, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(m) == 0 {
		t.Fatalf("spectest: no fixtures in %s", dir)
	}
	sort.Strings(m)
	return m
}
