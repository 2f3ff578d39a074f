package store

import (
	"encoding/binary"
	"errors"
	"math"
)

// On-disk layout of the bbolt store (format 1). Buckets:
//
//	docs  name -> meta: version 1, root 12, kind 1, snapshot u64, floor u64, last u64
//	snaps name -> snapshot state bytes
//	log   u16 len(name) | name | u64 last cursor -> chunk: version 1, uvarint count,
//	      then per record: uvarint len(origin), origin, uvarint len(commit), commit
//	wal   u64 sequence -> version 1, then per record: uvarint len(name), name,
//	      uvarint cursor, uvarint len(origin), origin, uvarint len(commit), commit
//	meta  "format" -> 1; "probe" -> u64 count of probe writes
//
// Integers are big-endian so byte order is numeric order: a document's log
// keys share the prefix u16 len(name) | name (the length stops "a" from
// prefixing "ab") and sort by cursor, so a range scan reads them in order.
// A log value is a chunk of consecutive records ending at the key's cursor,
// written by one checkpoint: a checkpoint costs one put per document and
// chunk, not one per record. Keying by the last cursor lets a read find the
// chunk holding cursor c with a forward seek to c.
// A document's meta is rewritten by its snapshots and by each checkpoint
// that folds records of it, not by each append: its last cursor is the
// greater of meta's and that of its records still in the wal.

const formatVersion = 1

var (
	bucketDocs  = []byte("docs")
	bucketSnaps = []byte("snaps")
	bucketLog   = []byte("log")
	bucketWAL   = []byte("wal")
	bucketMeta  = []byte("meta")
	keyFormat   = []byte("format")
	keyProbe    = []byte("probe")
)

var errShort = errors.New("truncated value")

func logPrefix[T string | []byte](doc T) []byte {
	k := make([]byte, 2+len(doc), 2+len(doc)+8)
	binary.BigEndian.PutUint16(k, uint16(len(doc)))
	copy(k[2:], doc)
	return k
}

func logKey[T string | []byte](doc T, cursor uint64) []byte {
	return binary.BigEndian.AppendUint64(logPrefix(doc), cursor)
}

// logCursor returns the cursor of a log key under prefix, or false when the
// key belongs to another document.
func logCursor(prefix, key []byte) (uint64, bool) {
	if len(key) != len(prefix)+8 || string(key[:len(prefix)]) != string(prefix) {
		return 0, false
	}
	return binary.BigEndian.Uint64(key[len(prefix):]), true
}

const metaSize = 38

func encodeMeta(d *docState) []byte {
	b := make([]byte, 0, metaSize)
	b = append(b, formatVersion)
	b = append(b, d.root[:]...)
	b = append(b, d.kind)
	b = binary.BigEndian.AppendUint64(b, d.snapshot)
	b = binary.BigEndian.AppendUint64(b, d.floor)
	b = binary.BigEndian.AppendUint64(b, d.last)
	return b
}

func decodeMeta(v []byte) (docState, error) {
	var d docState
	if len(v) != metaSize || v[0] != formatVersion {
		return d, errShort
	}
	d.exists = true
	copy(d.root[:], v[1:13])
	d.kind = v[13]
	d.snapshot = binary.BigEndian.Uint64(v[14:22])
	d.floor = binary.BigEndian.Uint64(v[22:30])
	d.last = binary.BigEndian.Uint64(v[30:38])
	return d, nil
}

// Chunk bounds: a checkpoint starts a new chunk past either, so a read
// decodes at most this much to reach its first record.
const (
	chunkRecords = 512
	chunkBytes   = 128 << 10
)

func appendChunkRecord(b, origin, commit []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(origin)))
	b = append(b, origin...)
	b = binary.AppendUvarint(b, uint64(len(commit)))
	return append(b, commit...)
}

// eachChunk decodes a chunk ending at cursor last and calls fn for each
// record in order, until fn returns false. The slices alias v.
func eachChunk(last uint64, v []byte, fn func(cursor uint64, origin, commit []byte) bool) error {
	if len(v) < 1 || v[0] != formatVersion {
		return errShort
	}
	n, k := binary.Uvarint(v[1:])
	if k <= 0 || n == 0 || n > last {
		return errShort
	}
	v = v[1+k:]
	for c := last - n + 1; ; c++ {
		origin, rest, err := lengthPrefixed(v)
		if err != nil {
			return err
		}
		commit, rest, err := lengthPrefixed(rest)
		if err != nil {
			return err
		}
		v = rest
		if !fn(c, origin, commit) {
			return nil
		}
		if c == last {
			if len(v) != 0 {
				return errShort
			}
			return nil
		}
	}
}

func appendWALRecord(b []byte, doc string, r Record) []byte {
	b = binary.AppendUvarint(b, uint64(len(doc)))
	b = append(b, doc...)
	b = binary.AppendUvarint(b, r.Cursor)
	b = binary.AppendUvarint(b, uint64(len(r.Origin)))
	b = append(b, r.Origin...)
	b = binary.AppendUvarint(b, uint64(len(r.Commit)))
	return append(b, r.Commit...)
}

func walRecordSize(doc string, r Record) int {
	return 4*binary.MaxVarintLen64 + len(doc) + len(r.Origin) + len(r.Commit)
}

// walEntry is one decoded record of a wal value; its slices alias the value.
type walEntry struct {
	doc    []byte
	cursor uint64
	origin []byte
	commit []byte
}

// eachWAL decodes a wal value and calls fn for each record in order.
func eachWAL(v []byte, fn func(walEntry) error) error {
	if len(v) < 1 || v[0] != formatVersion {
		return errShort
	}
	v = v[1:]
	for len(v) > 0 {
		var e walEntry
		var err error
		if e.doc, v, err = lengthPrefixed(v); err != nil {
			return err
		}
		c, n := binary.Uvarint(v)
		if n <= 0 {
			return errShort
		}
		e.cursor, v = c, v[n:]
		if e.origin, v, err = lengthPrefixed(v); err != nil {
			return err
		}
		if e.commit, v, err = lengthPrefixed(v); err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

func lengthPrefixed(v []byte) (field, rest []byte, err error) {
	n, k := binary.Uvarint(v)
	if k <= 0 || n > math.MaxInt32 || uint64(len(v)-k) < n {
		return nil, nil, errShort
	}
	return v[k : k+int(n)], v[k+int(n):], nil
}

func encodeU64(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }
