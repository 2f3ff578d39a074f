package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkAppendGroupCommit measures durable commits per second: N hubs,
// each appending one ~100-byte commit at a time to its own document and
// waiting for it to be on disk. The per=8 case is a hub that had 8 commits
// pending and appended them in one call.
//
//	go test -run '^$' -bench BenchmarkAppendGroupCommit -benchtime 5s ./gateway/store/
func BenchmarkAppendGroupCommit(b *testing.B) {
	for _, n := range []int{1, 64, 256} {
		b.Run(fmt.Sprintf("appenders=%d", n), func(b *testing.B) { benchAppend(b, n, 1, Options{}) })
	}
	b.Run("appenders=64/per=8", func(b *testing.B) { benchAppend(b, 64, 8, Options{}) })
}

// BenchmarkAppendNoWAL is the same load with a checkpoint in every
// commit: each record goes straight to its document's key range, so a
// commit writes about one page per document in it.
func BenchmarkAppendNoWAL(b *testing.B) {
	for _, n := range []int{64, 256} {
		b.Run(fmt.Sprintf("appenders=%d", n), func(b *testing.B) { benchAppend(b, n, 1, Options{CheckpointRecords: 1}) })
	}
}

// benchAppend runs b.N commits from appenders goroutines, per commits to a
// call, and reports commits per second and the latency of one call.
func benchAppend(b *testing.B, appenders, per int, o Options) {
	s, err := Open(b.TempDir(), o)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	commit := bytes.Repeat([]byte{'c'}, 100)
	for i := range appenders {
		create(b, s, fmt.Sprint("doc", i), 0)
	}
	ctx := context.Background()
	var left, written atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	lat := make([][]time.Duration, appenders)
	b.ResetTimer()
	start := time.Now()
	for i := range appenders {
		doc := fmt.Sprint("doc", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := make([]Record, per)
			for c := uint64(1); left.Add(-int64(per)) > -int64(per); c += uint64(per) {
				for j := range batch {
					batch[j] = Record{Cursor: c + uint64(j), Commit: commit, Origin: "link"}
				}
				t0 := time.Now()
				if err := s.Append(ctx, doc, batch); err != nil {
					failed.Store(&err)
					return
				}
				lat[i] = append(lat[i], time.Since(t0))
				written.Add(int64(per))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	b.ReportMetric(float64(written.Load())/elapsed.Seconds(), "commits/s")
	all := slices.Concat(lat...)
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(all[len(all)-1].Microseconds()), "max-µs")
}

// BenchmarkAppendNaiveBatch is the obvious bbolt design, for comparison:
// each append is a DB.Batch call that checks and bumps the document's last
// cursor and puts the record under its document's key.
func BenchmarkAppendNaiveBatch(b *testing.B) {
	for _, n := range []int{64, 256} {
		b.Run(fmt.Sprintf("appenders=%d", n), func(b *testing.B) {
			db, err := bolt.Open(filepath.Join(b.TempDir(), "naive.db"), 0o600, &bolt.Options{NoFreelistSync: true, FreelistType: bolt.FreelistMapType, InitialMmapSize: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			db.MaxBatchSize = n
			if err := db.Update(func(tx *bolt.Tx) error {
				_, err := tx.CreateBucket(bucketLog)
				return err
			}); err != nil {
				b.Fatal(err)
			}
			commit := bytes.Repeat([]byte{'c'}, 100)
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			var failed atomic.Pointer[error]
			b.ResetTimer()
			start := time.Now()
			for i := range n {
				doc := fmt.Sprint("doc", i)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for c := uint64(1); left.Add(-1) >= 0; c++ {
						err := db.Batch(func(tx *bolt.Tx) error {
							logB := tx.Bucket(bucketLog)
							meta := logPrefix(doc)
							if v := logB.Get(meta); c > 1 && (len(v) != 8 || binary.BigEndian.Uint64(v) != c-1) {
								return errors.New("cursor gap")
							}
							if err := logB.Put(meta, encodeU64(c)); err != nil {
								return err
							}
							return logB.Put(logKey(doc, c), appendChunkRecord([]byte{formatVersion, 1}, []byte("link"), commit))
						})
						if err != nil {
							failed.Store(&err)
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if err := failed.Load(); err != nil {
				b.Fatal(*err)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "commits/s")
		})
	}
}
