package commit

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftgate/weftgate/internal/spectest"
)

// validFixture is the part of a spec/fixtures/*.json file the codec checks.
type validFixture struct {
	Name    string `json:"name"`
	Commits []struct {
		Bytes  string            `json:"bytes"`
		Deltas []json.RawMessage `json:"deltas"`
		Tag    *string           `json:"tag"`
	} `json:"commits"`
}

type invalidFixture struct {
	Name   string `json:"name"`
	Stage  string `json:"stage"`
	Reason string `json:"reason"`
	Bytes  string `json:"bytes"`
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func fixtureName(path string) string { return strings.TrimSuffix(filepath.Base(path), ".json") }

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// allFixtureBytes returns the bytes of every commit in the corpus, valid and
// invalid, for seeding fuzzers and benchmarks.
func allFixtureBytes(t testing.TB) (valid, invalid [][]byte) {
	for _, p := range spectest.Files(t, "fixtures") {
		var f validFixture
		readJSON(t, p, &f)
		for _, c := range f.Commits {
			valid = append(valid, unhex(t, c.Bytes))
		}
	}
	for _, p := range spectest.Files(t, filepath.Join("fixtures", "invalid")) {
		var f invalidFixture
		readJSON(t, p, &f)
		invalid = append(invalid, unhex(t, f.Bytes))
	}
	return valid, invalid
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
