package store

import (
	"bytes"
	"fmt"
	"testing"
)

// FuzzDecode: stored bytes that do not decode are an error, never a panic,
// and what decodes survives a re-encode unchanged (varint lengths may be
// written longer than needed, so the comparison is of decoded values).
func FuzzDecode(f *testing.F) {
	f.Add(appendWALRecord([]byte{formatVersion}, "doc", rec("doc", 7)))
	f.Add(encodeLogValue("origin", []byte("commit")))
	f.Add(encodeMeta(&docState{exists: true, snapshot: 3, floor: 1, last: 9}))
	f.Add([]byte{formatVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, v []byte) {
		if entries, err := walEntries(v); err == nil {
			re := []byte{formatVersion}
			for _, e := range entries {
				re = appendWALRecord(re, string(e.doc), Record{Cursor: e.cursor, Origin: string(e.origin), Commit: e.commit})
			}
			again, err := walEntries(re)
			if err != nil || fmt.Sprint(again) != fmt.Sprint(entries) {
				t.Fatalf("wal value %x does not survive a re-encode: %v", v, err)
			}
		}
		if r, err := decodeLogValue(1, v); err == nil {
			r2, err := decodeLogValue(1, encodeLogValue(r.Origin, r.Commit))
			if err != nil || r2.Origin != r.Origin || !bytes.Equal(r2.Commit, r.Commit) {
				t.Fatalf("log value %x does not survive a re-encode: %v", v, err)
			}
		}
		if d, err := decodeMeta(v); err == nil && !bytes.Equal(encodeMeta(&d), v) {
			t.Fatalf("meta %x re-encodes as %x", v, encodeMeta(&d))
		}
	})
}

func walEntries(v []byte) ([]walEntry, error) {
	var out []walEntry
	err := eachWAL(v, func(e walEntry) error {
		out = append(out, e)
		return nil
	})
	return out, err
}
