package jsstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/gateway/store/storetest"
	"github.com/weftgate/weftgate/internal/natstest"
)

func rawOf(m *nats.Msg) *jetstream.RawStreamMsg {
	return &jetstream.RawStreamMsg{Header: m.Header, Data: m.Data}
}

func recsFrom(first uint64, n int) []store.Record {
	var recs []store.Record
	for i := range n {
		c := first + uint64(i)
		recs = append(recs, store.Record{Cursor: c, Commit: commitOf(i%2, c), Origin: fmt.Sprint("origin ", i%3)})
	}
	recs[0].Origin = "" // an origin may be empty
	return recs
}

// An append's records pack into one message per block, or one per record
// when the server's payload limit says so, and read back as they went in.
func TestRecordsPackPerBlock(t *testing.T) {
	for _, c := range []struct {
		name  string
		first uint64
		n     int
		limit int64
		msgs  int
	}{
		{"one record", 1, 1, 0, 1},
		{"one block", 1, 5, 0, 1},
		{"a whole block", 1, blockRecords, 0, 1},
		{"across a block's end", blockRecords - 2, 5, 0, 2},
		{"the payload limit", 1, 5, int64(packHead + 2*(2*10+len("origin 0")+len("w0@1"))), 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := recsFrom(c.first, c.n)
			msgs := messages("s.d.g", in, c.limit)
			if len(msgs) != c.msgs {
				t.Fatalf("%d messages, want %d", len(msgs), c.msgs)
			}
			var out []store.Record
			for _, m := range msgs {
				if m.Subject != block("s.d.g", must(cursorOf("d", m.Header))) {
					t.Fatalf("message on %s", m.Subject)
				}
				recs, err := recordsOf(nil, "d", rawOf(m))
				if err != nil {
					t.Fatal(err)
				}
				last, err := lastCursor("d", rawOf(m))
				if err != nil || last != recs[len(recs)-1].Cursor {
					t.Fatalf("last cursor %d (%v), want %d", last, err, recs[len(recs)-1].Cursor)
				}
				out = append(out, recs...)
			}
			if fmt.Sprint(out) != fmt.Sprint(in) {
				t.Fatalf("read back %v\nwant %v", out, in)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A packed message that does not hold what its head says is corrupt, with
// the reason named, never a panic or a short read.
func TestBadPackedMessagesAreCorrupt(t *testing.T) {
	good := messages("s.d.g", recsFrom(1, 3), 0)[0]
	for name, edit := range map[string]func(m *nats.Msg){
		"no count":         func(m *nats.Msg) { m.Header.Set(hdrCount, "x") },
		"a count of 0":     func(m *nats.Msg) { m.Header.Set(hdrCount, "0") },
		"one record more":  func(m *nats.Msg) { m.Header.Set(hdrCount, "4") },
		"one record less":  func(m *nats.Msg) { m.Header.Set(hdrCount, "2") },
		"cut short":        func(m *nats.Msg) { m.Data = m.Data[:len(m.Data)-1] },
		"a length too big": func(m *nats.Msg) { m.Data = append([]byte{0xff, 0xff, 0x03}, m.Data...) },
		"no cursor":        func(m *nats.Msg) { m.Header.Del(hdrCursor) },
		"an origin too long": func(m *nats.Msg) {
			m.Header.Set(hdrCount, "1")
			o := strings.Repeat("o", store.MaxOriginBytes+1)
			m.Data = append(append(append([]byte{}, byte(len(o)&0x7f|0x80), byte(len(o)>>7)), o...), 1, 'c')
		},
	} {
		t.Run(name, func(t *testing.T) {
			m := nats.NewMsg(good.Subject)
			for k, v := range good.Header {
				m.Header[k] = append([]string(nil), v...)
			}
			m.Data = append([]byte(nil), good.Data...)
			edit(m)
			if _, err := recordsOf(nil, "d", rawOf(m)); !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("got %v, want corrupt", err)
			}
		})
	}
}

// On the server: single-record and packed messages, and a batch across a
// block's end, read and follow as one log; a packed append is one message.
func TestPackedAndSingleRecordsReadAsOneLog(t *testing.T) {
	ns := natstest.Start(t)
	s, _ := openOn(t, ns, Options{})
	ctx := context.Background()
	storetest.Create(t, s, "d", 0)
	var all []store.Record
	for _, r := range [][2]int{{1, 1}, {2, 5}, {7, 1}, {8, blockRecords}} {
		recs := recsFrom(uint64(r[0]), r[1])
		if err := s.Append(ctx, "d", recs); err != nil {
			t.Fatal(err)
		}
		all = append(all, recs...)
	}
	info, err := s.stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 5 { // 1, 2..6, 7, 8..64, 65..71
		t.Fatalf("the stream holds %d messages, want 5", info.State.Msgs)
	}
	for _, from := range []uint64{1, 3, 6, 64, 65, 71} {
		got, err := s.Read(ctx, "d", from, 0)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(all[from-1:]) {
			t.Fatalf("read from %d: %v", from, got)
		}
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var got []store.Record
	err = s.Follow(fctx, "d", 4, func(r store.Record) error {
		got = append(got, r)
		if r.Cursor == uint64(len(all)) {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(all[4:]) {
		t.Fatalf("followed from 4: %v", got)
	}
	if i, err := s.Info(ctx, "d"); err != nil || i.Last != uint64(len(all)) {
		t.Fatalf("info says the last is %d (%v), want %d", i.Last, err, len(all))
	}
}

// Whatever a message holds, reading it gives a named error or records with
// consecutive cursors from the message's own, never a panic; what it gives
// packs again into messages that read the same.
func FuzzRecordsOf(f *testing.F) {
	for _, m := range messages("s.d.g", recsFrom(7, 4), 0) {
		f.Add(m.Header.Get(hdrCount), m.Data)
	}
	f.Add("2", []byte{0, 1, 'a', 0})
	f.Add("1", []byte{})
	f.Fuzz(func(t *testing.T, count string, data []byte) {
		m := nats.NewMsg("s.d.g.0")
		m.Header.Set(hdrCursor, "7")
		m.Header.Set(hdrCount, count)
		m.Data = data
		recs, err := recordsOf(nil, "d", rawOf(m))
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("error %v is not corrupt", err)
			}
			return
		}
		if len(recs) == 0 {
			t.Fatal("no records and no error")
		}
		last, err := lastCursor("d", rawOf(m))
		if err != nil || last != recs[len(recs)-1].Cursor {
			t.Fatalf("last cursor %d (%v), records end at %d", last, err, recs[len(recs)-1].Cursor)
		}
		for i, r := range recs {
			if r.Cursor != 7+uint64(i) {
				t.Fatalf("record %d at cursor %d", i, r.Cursor)
			}
		}
		var again []store.Record
		for _, m := range messages("s.d.g", recs, 0) {
			rs, err := recordsOf(nil, "d", rawOf(m))
			if err != nil {
				t.Fatal(err)
			}
			again = append(again, rs...)
		}
		if fmt.Sprint(again) != fmt.Sprint(recs) {
			t.Fatalf("packed again, %v reads as %v", recs, again)
		}
	})
}
