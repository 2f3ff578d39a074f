package document

import (
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/weftgate/weftgate/internal/spectest"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

type validFixture struct {
	Initial json.RawMessage `json:"initial"`
	Commits []struct {
		Bytes string `json:"bytes"`
	} `json:"commits"`
	Final json.RawMessage `json:"final"`
}

type invalidFixture struct {
	Stage   string          `json:"stage"`
	Reason  string          `json:"reason"`
	Initial json.RawMessage `json:"initial"`
	Bytes   string          `json:"bytes"`
}

func readFixture(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func decodeHex(t *testing.T, s string) commit.Commit {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	c, err := commit.Decode(b)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return c
}

func parse(t *testing.T, raw json.RawMessage) *Document {
	t.Helper()
	d, err := ParseJSON(raw, Limits{})
	if err != nil {
		t.Fatalf("parse document: %v", err)
	}
	checkInvariants(t, d)
	return d
}

// sameJSON compares our JSON view with a fixture document as JSON values:
// same observables, kinds, keys and values, whatever the key order.
func sameJSON(t *testing.T, d *Document, want json.RawMessage) {
	t.Helper()
	got, err := json.Marshal(d)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("document\n%s\nwant\n%s", got, want)
	}
}

// orders is the deltas as decoded, reversed, and in seeded shuffles.
func orders(c commit.Commit) []commit.Commit {
	out := []commit.Commit{c, reversed(c)}
	for seed := uint64(1); seed <= 4; seed++ {
		ds := slices.Clone(c.Deltas)
		r := rand.New(rand.NewPCG(seed, 99))
		r.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
		out = append(out, commit.Commit{Deltas: ds, Tag: c.Tag})
	}
	return out
}

func TestFixtures(t *testing.T) {
	files := spectest.Files(t, "fixtures")
	if len(files) != 16 {
		t.Fatalf("%d commit fixtures, INDEX.md lists 16", len(files))
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			var f validFixture
			readFixture(t, path, &f)
			d := parse(t, f.Initial)
			sameJSON(t, d, f.Initial)
			for i, fc := range f.Commits {
				c := decodeHex(t, fc.Bytes)
				before := d.Clone()
				beforeJSON, _ := json.Marshal(before)
				var next *Document
				for k, o := range orders(c) {
					x := before.Clone()
					inv, err := x.Apply(o)
					if err != nil {
						t.Fatalf("commit %d order %d: %v", i, k, err)
					}
					checkInvariants(t, x)
					if next == nil {
						next = x
					} else if dump(x) != dump(next) {
						t.Fatalf("commit %d: order %d reaches another document", i, k)
					}
					// The inverse restores the exact prior JSON.
					u := x.Clone()
					if _, err := u.Apply(inv); err != nil {
						t.Fatalf("commit %d: inverse refused: %v", i, err)
					}
					sameJSON(t, u, beforeJSON)
				}
				d = next
			}
			sameJSON(t, d, f.Final)
			// The final document, read back from the fixture, is ours.
			if !sameSnapshot(t, parse(t, f.Final).Snapshot(), d.Snapshot()) {
				t.Fatalf("final snapshot differs")
			}
			checkSnapshot(t, d)
			// Reconciling the initial document to the final state gets there.
			e := parse(t, f.Initial)
			if _, err := e.Reconcile(d.Snapshot()); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			sameJSON(t, e, f.Final)
		})
	}
}

func TestInvalidFixtures(t *testing.T) {
	files := spectest.Files(t, filepath.Join("fixtures", "invalid"))
	apply := 0
	for _, path := range files {
		var f invalidFixture
		readFixture(t, path, &f)
		if f.Stage != "apply" {
			continue
		}
		apply++
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			d := parse(t, f.Initial)
			c := decodeHex(t, f.Bytes)
			for _, o := range orders(c) {
				refused(t, d, o, protocol.Reason(f.Reason))
			}
			sameJSON(t, d, f.Initial)
		})
	}
	if apply != 8 {
		t.Fatalf("%d apply-stage fixtures, INDEX.md lists 8", apply)
	}
}
