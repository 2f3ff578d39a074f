package spectest

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// Dir returns the absolute path of aweft-spec/spec, or fails t.
// WEFTGATE_SPEC overrides the location.
func Dir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("WEFTGATE_SPEC"); d != "" {
		return mustDir(t, d)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("spectest: %v", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return mustDir(t, filepath.Join(d, "..", "shared", "aweft-spec", "spec"))
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
		t.Fatalf("spectest: the aweft spec corpus is missing at %s (expected ../shared/aweft-spec/spec beside the repository)", abs)
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
