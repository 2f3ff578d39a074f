package store

import (
	"fmt"
	"math"
)

// Checks shared by every implementation, done before anything is queued so
// bad input never reaches the writer.

func checkName(doc string) error {
	if doc == "" {
		return errorf(BadName, "", "empty document name")
	}
	if len(doc) > MaxNameBytes {
		return errorf(BadName, "", fmt.Sprintf("document name of %d bytes exceeds MaxNameBytes (%d)", len(doc), MaxNameBytes))
	}
	return nil
}

// checkAppend validates recs on their own and returns their commit bytes.
func checkAppend(doc string, recs []Record) (int, error) {
	if err := checkName(doc); err != nil {
		return 0, err
	}
	if len(recs) > MaxAppendRecords {
		return 0, errorf(TooLarge, doc, fmt.Sprintf("%d records exceed MaxAppendRecords (%d)", len(recs), MaxAppendRecords))
	}
	total := 0
	for i, r := range recs {
		if r.Cursor == 0 {
			return 0, errorf(CursorMismatch, doc, "cursor 0 is never a record")
		}
		if i > 0 && r.Cursor != recs[i-1].Cursor+1 {
			return 0, errorf(CursorMismatch, doc, fmt.Sprintf("record %d has cursor %d after %d: not consecutive", i, r.Cursor, recs[i-1].Cursor))
		}
		if r.Cursor == math.MaxUint64 {
			return 0, errorf(CursorMismatch, doc, "cursor space exhausted")
		}
		if len(r.Commit) > MaxRecordBytes {
			return 0, errorf(TooLarge, doc, fmt.Sprintf("record of %d bytes exceeds MaxRecordBytes (%d)", len(r.Commit), MaxRecordBytes))
		}
		if len(r.Origin) > MaxOriginBytes {
			return 0, errorf(TooLarge, doc, fmt.Sprintf("origin of %d bytes exceeds MaxOriginBytes (%d)", len(r.Origin), MaxOriginBytes))
		}
		total += len(r.Commit)
	}
	if total > MaxAppendBytes {
		return 0, errorf(TooLarge, doc, fmt.Sprintf("append of %d bytes exceeds MaxAppendBytes (%d)", total, MaxAppendBytes))
	}
	return total, nil
}

func checkSnapshot(doc string, s Snapshot) error {
	if err := checkName(doc); err != nil {
		return err
	}
	if len(s.State) > MaxSnapshotBytes {
		return errorf(TooLarge, doc, fmt.Sprintf("snapshot of %d bytes exceeds MaxSnapshotBytes (%d)", len(s.State), MaxSnapshotBytes))
	}
	return nil
}

// docState is the part of a document's state both implementations reason
// about when admitting a write.
type docState struct {
	exists   bool
	root     [12]byte
	kind     uint8
	snapshot uint64
	floor    uint64
	last     uint64
}

// admitAppend checks recs (already checked on their own) against d.
func (d *docState) admitAppend(doc string, recs []Record) error {
	if !d.exists {
		return errorf(UnknownDocument, doc, "append to a document with no snapshot")
	}
	if recs[0].Cursor != d.last+1 {
		return errorf(CursorMismatch, doc, fmt.Sprintf("first cursor %d, want %d", recs[0].Cursor, d.last+1))
	}
	return nil
}

// admitSnapshot checks s against d and returns the state after it.
func (d *docState) admitSnapshot(doc string, s Snapshot, o Options) (docState, error) {
	if !d.exists {
		return docState{exists: true, root: s.Root, kind: s.RootKind, snapshot: s.Cursor, floor: s.Cursor, last: s.Cursor}, nil
	}
	if s.Root != d.root || s.RootKind != d.kind {
		return *d, errorf(RootMismatch, doc, "snapshot root differs from the document's")
	}
	if s.Cursor < d.snapshot || s.Cursor > d.last {
		return *d, errorf(SnapshotCursor, doc, fmt.Sprintf("cursor %d outside [%d, %d]", s.Cursor, d.snapshot, d.last))
	}
	n := *d
	n.snapshot = s.Cursor
	n.floor = o.floorFor(s.Cursor, d.floor)
	return n, nil
}

// checkRead validates a read and normalises from, against d.
func (d *docState) checkRead(doc string, from uint64) (uint64, error) {
	if from == 0 {
		from = 1
	}
	if from <= d.floor {
		return 0, errorf(Compacted, doc, fmt.Sprintf("cursor %d is not retained (floor %d)", from, d.floor))
	}
	if from > d.last+1 {
		return 0, errorf(CursorAhead, doc, fmt.Sprintf("cursor %d is beyond the last, %d", from, d.last))
	}
	return from, nil
}

func (d *docState) info(name string) DocInfo {
	return DocInfo{Name: name, Root: d.root, RootKind: d.kind, Snapshot: d.snapshot, Floor: d.floor, Last: d.last}
}

// readLimit normalises Read's max.
func readLimit(max int) int {
	if max <= 0 || max > MaxReadRecords {
		return MaxReadRecords
	}
	return max
}

// take reports whether another record of n bytes fits a result that has
// count records and size bytes under the given bounds; the first always fits.
func take(count, size, n, maxCount, maxBytes int) bool {
	return count == 0 || (count < maxCount && size+n <= maxBytes)
}

// CheckAppend validates recs on their own, before anything is written:
// the name, the limits and consecutive cursors. Every implementation,
// also outside this package, admits an Append with it first.
func CheckAppend(doc string, recs []Record) error {
	_, err := checkAppend(doc, recs)
	return err
}

// CheckSnapshot validates s on its own: the name and the state's size.
func CheckSnapshot(doc string, s Snapshot) error { return checkSnapshot(doc, s) }

// CheckName validates a document name.
func CheckName(doc string) error { return checkName(doc) }
