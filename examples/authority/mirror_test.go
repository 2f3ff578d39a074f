package main

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/weftgate/weftgate/bridge/client"
	"github.com/weftgate/weftgate/protocol/commit"
)

type fetcher struct {
	calls []string
	state client.State
	cur   uint64
	err   error
}

func (f *fetcher) fetch(_ context.Context, name string) (client.State, uint64, error) {
	f.calls = append(f.calls, name)
	return f.state, f.cur, f.err
}

func newTestMirror(t *testing.T, f *fetcher) (*mirror, dirStore, *[]uint64) {
	s := dirStore{dir: t.TempDir()}
	m := newMirror(s, slog.New(slog.DiscardHandler), f.fetch)
	var saves []uint64
	m.saved = func(_ string, c uint64) { saves = append(saves, c) }
	return m, s, &saves
}

func commitEvent(doc string, cur uint64, ds ...commit.Delta) client.Event {
	return client.Event{Kind: client.CommitEvent, Document: doc, Cursor: cur, CommitView: client.CommitView{Commit: commit.Commit{Deltas: ds}}}
}

func loadTitle(t *testing.T, s dirStore, name string) (string, uint64) {
	t.Helper()
	l, err := s.Load(name)
	if err != nil || l == nil {
		t.Fatalf("load %s: %v, %v", name, l, err)
	}
	for _, d := range l.State.Commit.Deltas {
		if d.Ref.Key == "title" {
			return d.Value.Str, l.Cursor
		}
	}
	return "", l.Cursor
}

func TestMirrorFollowsEvents(t *testing.T) {
	f := &fetcher{}
	m, s, saves := newTestMirror(t, f)
	ctx := context.Background()
	r := client.Root{ID: root, Kind: commit.Object}
	snap := client.Event{Kind: client.SnapshotEvent, Document: "d", Cursor: 3, Root: r,
		CommitView: client.CommitView{Commit: commit.Commit{Deltas: []commit.Delta{text("title", "one")}}}}
	if err := m.Event(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if title, cur := loadTitle(t, s, "d"); title != "one" || cur != 3 {
		t.Fatalf("after the snapshot: %q at %d", title, cur)
	}
	replace := commit.Delta{Op: commit.Replace, ID: root, Ref: commit.ObjectKey("title"), Value: commit.TextValue("two")}
	if err := m.Event(ctx, commitEvent("d", 4, replace)); err != nil {
		t.Fatal(err)
	}
	if title, cur := loadTitle(t, s, "d"); title != "two" || cur != 4 {
		t.Fatalf("after the commit: %q at %d", title, cur)
	}
	// An event the mirror has is skipped; CaughtUp saves nothing.
	if err := m.Event(ctx, commitEvent("d", 4, replace)); err != nil {
		t.Fatal(err)
	}
	if err := m.Event(ctx, client.Event{Kind: client.CaughtUpEvent}); err != nil {
		t.Fatal(err)
	}
	if len(*saves) != 2 || len(f.calls) != 0 {
		t.Fatalf("saves %v, fetches %v", *saves, f.calls)
	}
}

// A document first seen by a commit, or whose commit does not apply, is
// read whole from the gateway.
func TestMirrorRefetches(t *testing.T) {
	f := &fetcher{state: client.State{Root: client.Root{ID: root, Kind: commit.Object}, Commit: commit.Commit{Deltas: []commit.Delta{text("title", "gw")}}}, cur: 9}
	m, s, _ := newTestMirror(t, f)
	ctx := context.Background()
	if err := m.Event(ctx, commitEvent("new", 8, text("x", "y"))); err != nil {
		t.Fatal(err)
	}
	if title, cur := loadTitle(t, s, "new"); title != "gw" || cur != 9 || len(f.calls) != 1 {
		t.Fatalf("a new document: %q at %d after %v", title, cur, f.calls)
	}
	if err := m.Event(ctx, commitEvent("new", 9, text("x", "y"))); err != nil || len(f.calls) != 1 {
		t.Fatalf("a commit the fetched state has: %v, fetches %v", err, f.calls)
	}
	// "title" exists: an add of it does not apply, so the state is re-read.
	f.cur = 10
	if err := m.Event(ctx, commitEvent("new", 10, text("title", "again"))); err != nil || len(f.calls) != 2 {
		t.Fatalf("a commit that did not apply: %v, fetches %v", err, f.calls)
	}
	f.err = errors.New("gateway down")
	if err := m.Event(ctx, commitEvent("other", 1, text("a", "b"))); err == nil {
		t.Fatal("a failed fetch was not reported")
	}
}

func TestMirrorPreload(t *testing.T) {
	f := &fetcher{}
	m, s, _ := newTestMirror(t, f)
	if err := s.Save("d", client.State{Root: client.Root{ID: root, Kind: commit.Object}, Commit: commit.Commit{Deltas: []commit.Delta{text("title", "disk")}}}, 5); err != nil {
		t.Fatal(err)
	}
	cur, _ := s.Cursors()
	if err := m.preload(cur); err != nil {
		t.Fatal(err)
	}
	replace := commit.Delta{Op: commit.Replace, ID: root, Ref: commit.ObjectKey("title"), Value: commit.TextValue("next")}
	if err := m.Event(context.Background(), commitEvent("d", 6, replace)); err != nil {
		t.Fatal(err)
	}
	if title, c := loadTitle(t, s, "d"); title != "next" || c != 6 || len(f.calls) != 0 {
		t.Fatalf("after preload: %q at %d, fetches %v", title, c, f.calls)
	}
}
