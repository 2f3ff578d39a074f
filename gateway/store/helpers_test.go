package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
)

func rootOf(doc string) [12]byte {
	var r [12]byte
	copy(r[:], "root:"+doc)
	return r
}

// payload is the deterministic commit of doc at cursor, about 100 bytes.
func payload(doc string, cursor uint64) []byte {
	return fmt.Appendf(nil, "%s@%d:%s", doc, cursor, bytes.Repeat([]byte{'x'}, 80))
}

func rec(doc string, cursor uint64) Record {
	return Record{Cursor: cursor, Commit: payload(doc, cursor), Origin: fmt.Sprintf("link-%d", cursor%7)}
}

func recs(doc string, from uint64, n int) []Record {
	out := make([]Record, n)
	for i := range out {
		out[i] = rec(doc, from+uint64(i))
	}
	return out
}

func create(t testing.TB, s Store, doc string, cursor uint64) {
	t.Helper()
	if err := s.PutSnapshot(context.Background(), doc, Snapshot{Cursor: cursor, Root: rootOf(doc), RootKind: 2}); err != nil {
		t.Fatalf("create %s: %v", doc, err)
	}
}

// appendRange appends cursors from..to in calls of at most step records.
func appendRange(t testing.TB, s Store, doc string, from, to uint64, step int) {
	t.Helper()
	for c := from; c <= to; {
		n := min(uint64(step), to-c+1)
		if err := s.Append(context.Background(), doc, recs(doc, c, int(n))); err != nil {
			t.Fatalf("append %s %d..%d: %v", doc, c, c+n-1, err)
		}
		c += n
	}
}

// wantRecords checks got is exactly doc's records from..to.
func wantRecords(t testing.TB, doc string, got []Record, from, to uint64) {
	t.Helper()
	if want := int(to - from + 1); from > to && len(got) != 0 || from <= to && len(got) != want {
		t.Fatalf("%s: got %d records, want %d..%d", doc, len(got), from, to)
	}
	for i, r := range got {
		want := rec(doc, from+uint64(i))
		if r.Cursor != want.Cursor || !bytes.Equal(r.Commit, want.Commit) || r.Origin != want.Origin {
			t.Fatalf("%s: record %d is {%d %q %q}, want {%d %q %q}", doc, i, r.Cursor, r.Commit, r.Origin, want.Cursor, want.Commit, want.Origin)
		}
	}
}

func wantReason(t testing.TB, err error, r Reason) {
	t.Helper()
	if ReasonOf(err) != r {
		t.Fatalf("got error %v, want reason %s", err, r)
	}
	if !errors.Is(err, &Error{Reason: r}) {
		t.Fatalf("errors.Is(%v, %s) is false", err, r)
	}
}

func info(t testing.TB, s Store, doc string) DocInfo {
	t.Helper()
	i, err := s.Info(context.Background(), doc)
	if err != nil {
		t.Fatalf("info %s: %v", doc, err)
	}
	return i
}

func read(t testing.TB, s Store, doc string, from uint64, max int) []Record {
	t.Helper()
	got, err := s.Read(context.Background(), doc, from, max)
	if err != nil {
		t.Fatalf("read %s from %d: %v", doc, from, err)
	}
	return got
}
