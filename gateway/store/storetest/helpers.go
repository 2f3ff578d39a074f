package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/weftgate/weftgate/gateway/store"
)

func RootOf(doc string) [12]byte {
	var r [12]byte
	copy(r[:], "root:"+doc)
	return r
}

// Payload is the deterministic commit of doc at cursor, about 100 bytes.
func Payload(doc string, cursor uint64) []byte {
	return fmt.Appendf(nil, "%s@%d:%s", doc, cursor, bytes.Repeat([]byte{'x'}, 80))
}

func Rec(doc string, cursor uint64) store.Record {
	return store.Record{Cursor: cursor, Commit: Payload(doc, cursor), Origin: fmt.Sprintf("link-%d", cursor%7)}
}

func Recs(doc string, from uint64, n int) []store.Record {
	out := make([]store.Record, n)
	for i := range out {
		out[i] = Rec(doc, from+uint64(i))
	}
	return out
}

func Create(t testing.TB, s store.Store, doc string, cursor uint64) {
	t.Helper()
	if err := s.PutSnapshot(context.Background(), doc, store.Snapshot{Cursor: cursor, Root: RootOf(doc), RootKind: 2}); err != nil {
		t.Fatalf("create %s: %v", doc, err)
	}
}

// AppendRange appends cursors from..to in calls of at most step records.
func AppendRange(t testing.TB, s store.Store, doc string, from, to uint64, step int) {
	t.Helper()
	for c := from; c <= to; {
		n := min(uint64(step), to-c+1)
		if err := s.Append(context.Background(), doc, Recs(doc, c, int(n))); err != nil {
			t.Fatalf("append %s %d..%d: %v", doc, c, c+n-1, err)
		}
		c += n
	}
}

// WantRecords checks got is exactly doc's records from..to.
func WantRecords(t testing.TB, doc string, got []store.Record, from, to uint64) {
	t.Helper()
	if want := int(to - from + 1); from > to && len(got) != 0 || from <= to && len(got) != want {
		t.Fatalf("%s: got %d records, want %d..%d", doc, len(got), from, to)
	}
	for i, r := range got {
		want := Rec(doc, from+uint64(i))
		if r.Cursor != want.Cursor || !bytes.Equal(r.Commit, want.Commit) || r.Origin != want.Origin {
			t.Fatalf("%s: record %d is {%d %q %q}, want {%d %q %q}", doc, i, r.Cursor, r.Commit, r.Origin, want.Cursor, want.Commit, want.Origin)
		}
	}
}

func WantReason(t testing.TB, err error, r store.Reason) {
	t.Helper()
	if store.ReasonOf(err) != r {
		t.Fatalf("got error %v, want reason %s", err, r)
	}
	if !errors.Is(err, &store.Error{Reason: r}) {
		t.Fatalf("errors.Is(%v, %s) is false", err, r)
	}
}

func Info(t testing.TB, s store.Store, doc string) store.DocInfo {
	t.Helper()
	i, err := s.Info(context.Background(), doc)
	if err != nil {
		t.Fatalf("info %s: %v", doc, err)
	}
	return i
}

func Read(t testing.TB, s store.Store, doc string, from uint64, max int) []store.Record {
	t.Helper()
	got, err := s.Read(context.Background(), doc, from, max)
	if err != nil {
		t.Fatalf("read %s from %d: %v", doc, from, err)
	}
	return got
}
