package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
)

// FuzzDecode: stored bytes that do not decode are an error, never a panic,
// and what decodes survives a re-encode unchanged (varint lengths may be
// written longer than needed, so the comparison is of decoded values).
func FuzzDecode(f *testing.F) {
	f.Add(appendWALRecord([]byte{formatVersion}, "doc", rec("doc", 7)))
	f.Add(appendChunkRecord(appendChunkRecord([]byte{formatVersion, 2}, []byte("o"), []byte("c1")), nil, []byte("c2")))
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
		if recs, err := chunkRecordsOf(v); err == nil {
			re := binary.AppendUvarint([]byte{formatVersion}, uint64(len(recs)))
			for _, r := range recs {
				re = appendChunkRecord(re, []byte(r.Origin), r.Commit)
			}
			again, err := chunkRecordsOf(re)
			if err != nil || fmt.Sprint(again) != fmt.Sprint(recs) {
				t.Fatalf("chunk %x does not survive a re-encode: %v", v, err)
			}
		}
		if d, err := decodeMeta(v); err == nil && !bytes.Equal(encodeMeta(&d), v) {
			t.Fatalf("meta %x re-encodes as %x", v, encodeMeta(&d))
		}
	})
}

// chunkRecordsOf decodes a whole chunk ending at cursor 1000.
func chunkRecordsOf(v []byte) ([]Record, error) {
	var out []Record
	err := eachChunk(1000, v, func(c uint64, origin, commit []byte) bool {
		out = append(out, Record{Cursor: c, Origin: string(origin), Commit: commit})
		return true
	})
	return out, err
}

func walEntries(v []byte) ([]walEntry, error) {
	var out []walEntry
	err := eachWAL(v, func(e walEntry) error {
		out = append(out, e)
		return nil
	})
	return out, err
}
