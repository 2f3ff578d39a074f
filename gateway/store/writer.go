package store

import (
	"encoding/binary"
	"runtime"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// writer is the one goroutine that writes the bbolt file. Each batch of
// queued requests becomes one transaction (bbolt syncs twice per commit:
// pages, then meta); callers learn their outcome only after it commits.
type writer struct {
	s     *Bolt
	opts  Options
	cache map[string]*docState // admitted state of documents touched since the last checkpoint
	seq   uint64               // next wal key

	walRecords, walBytes int // what the wal holds, for the checkpoint bounds

	failed error // non-nil while writes are refused
	timer  *time.Timer
	batch  []*request // reused between batches

	lastBatch int // requests in the last batch
}

func newWriter(s *Bolt) *writer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &writer{s: s, opts: s.opts, cache: make(map[string]*docState), seq: 1, timer: t}
}

func (w *writer) run() {
	defer close(w.s.done)
	defer w.timer.Stop()
	for {
		var probe <-chan time.Time
		if w.failed != nil {
			probe = w.timer.C
		}
		select {
		case r := <-w.s.reqs:
			w.handle(w.collect(r))
		case <-probe:
			w.fold(true)
		case <-w.s.stop:
			w.drain()
			return
		}
	}
}

// maxGatherYields bounds how long collect waits for company.
const maxGatherYields = 32

// collect takes first and whatever else is already queued, within the
// batch bounds. When the last batch had company, it also yields while more
// keeps arriving: the callers its last commit released are about to queue
// again, and a commit costs the same for one record or hundreds.
func (w *writer) collect(first *request) []*request {
	b := append(w.batch[:0], first)
	n, size := first.count(), first.bytes
	yields := 0
	for n < w.opts.BatchRecords && size < w.opts.BatchBytes {
		select {
		case r := <-w.s.reqs:
			b = append(b, r)
			n += r.count()
			size += r.bytes
			continue
		default:
		}
		if w.lastBatch < 2 || yields == maxGatherYields {
			break
		}
		yields++
		runtime.Gosched()
		if len(w.s.reqs) == 0 {
			break
		}
	}
	w.lastBatch = len(b)
	return b
}

// drain answers everything still queued at Close, then folds the wal so the
// next Open starts clean.
func (w *writer) drain() {
	for {
		select {
		case r := <-w.s.reqs:
			w.handle(w.collect(r))
		default:
			if w.failed == nil && w.walRecords > 0 && !w.s.keepWAL {
				w.fold(false)
			}
			return
		}
	}
}

func (w *writer) handle(all []*request) {
	defer func() {
		clear(all)
		w.batch = all[:0]
	}()
	batch := all
	if w.failed != nil {
		for _, r := range batch {
			if r.kind == reqProbe {
				w.fold(true)
				break
			}
		}
		if w.failed != nil {
			for _, r := range batch {
				r.reply(unavailable(r.doc, w.failed))
			}
			return
		}
	}
	// A delete folds the wal and goes alone, so the writes queued before it
	// commit first and those after it see the document gone.
	for len(batch) > 0 {
		i := slices.IndexFunc(batch, func(r *request) bool { return r.kind == reqDelete })
		switch {
		case i < 0:
			w.commit(batch)
			return
		case i == 0:
			w.delete(batch[0])
			batch = batch[1:]
		default:
			w.commit(batch[:i])
			batch = batch[i:]
		}
		if w.failed != nil {
			for _, r := range batch {
				r.reply(unavailable(r.doc, w.failed))
			}
			return
		}
	}
}

// delete removes r.doc in one transaction that first folds the wal, so
// every record of the document is in the log, where it is deleted with
// the rest: no trace of it is left in either place.
func (w *writer) delete(r *request) {
	tx, err := w.s.db.Begin(true)
	if err != nil {
		w.failBatch([]*request{r}, err)
		return
	}
	var gone error
	if _, _, err = checkpoint(tx); err == nil {
		gone, err = deleteDocument(tx, r.doc)
	}
	if err == nil && gone == nil && w.opts.Fault != nil {
		err = w.opts.Fault()
	}
	if err != nil || gone != nil {
		tx.Rollback()
		if err != nil {
			w.failBatch([]*request{r}, err)
		} else {
			r.reply(gone)
		}
		return
	}
	if err := tx.Commit(); err != nil {
		w.failBatch([]*request{r}, err)
		return
	}
	w.s.pmu.Lock()
	w.s.pend = make(map[string][]Record)
	w.s.deletes++
	w.s.pmu.Unlock()
	w.walRecords, w.walBytes = 0, 0
	clear(w.cache)
	r.reply(nil)
}

// pendAdd is one admitted append, to publish once its batch commits.
type pendAdd struct {
	doc  string
	recs []Record
}

// commit writes batch as one transaction: appends as one wal value, snapshots
// in place, and a checkpoint when the wal is due one.
func (w *writer) commit(batch []*request) {
	tx, err := w.s.db.Begin(true)
	if err != nil {
		w.failBatch(batch, err)
		return
	}
	size := 1
	for _, r := range batch {
		for _, rec := range r.recs {
			size += walRecordSize(r.doc, rec)
		}
	}
	wal := make([]byte, 1, size)
	wal[0] = formatVersion
	staged := make(map[string]*docState)
	var adds []pendAdd
	records, bytes := 0, 0
	for _, r := range batch {
		switch r.kind {
		case reqAppend:
			var add pendAdd
			add, r.err = w.stageAppend(tx, staged, r, &wal)
			if r.err == nil {
				adds = append(adds, add)
				records += len(r.recs)
				bytes += r.bytes
			}
		case reqSnapshot:
			r.err, err = w.stageSnapshot(tx, staged, r)
		case reqProbe:
			r.err = nil
		}
		if err != nil {
			break
		}
	}
	if err == nil && records > 0 {
		walB := tx.Bucket(bucketWAL)
		walB.FillPercent = 1 // keys only ever grow
		err = walB.Put(encodeU64(w.seq), wal)
	}
	fold := w.walRecords+records >= w.opts.CheckpointRecords || w.walBytes+bytes >= w.opts.CheckpointBytes
	if err == nil && fold {
		_, _, err = checkpoint(tx)
	}
	if err == nil && w.opts.Fault != nil {
		err = w.opts.Fault()
	}
	if err != nil {
		tx.Rollback()
		w.failBatch(batch, err)
		return
	}
	if err := tx.Commit(); err != nil {
		w.failBatch(batch, err)
		return
	}
	if records > 0 {
		w.seq++
	}
	w.s.pmu.Lock()
	if fold {
		w.s.pend = make(map[string][]Record)
	} else {
		for _, a := range adds {
			w.s.pend[a.doc] = append(w.s.pend[a.doc], a.recs...)
		}
	}
	w.s.pmu.Unlock()
	if fold {
		w.walRecords, w.walBytes = 0, 0
		clear(w.cache)
	} else {
		w.walRecords += records
		w.walBytes += bytes
		for doc, d := range staged {
			w.cache[doc] = d
		}
	}
	for _, r := range batch {
		r.reply(r.err)
	}
}

// state returns doc's state as staged in this batch, loading it on first
// touch.
func (w *writer) state(tx *bolt.Tx, staged map[string]*docState, doc string) (*docState, error) {
	if d, ok := staged[doc]; ok {
		return d, nil
	}
	var d docState
	if c, ok := w.cache[doc]; ok {
		d = *c
	} else {
		var pendLast uint64
		if p := w.s.pend[doc]; len(p) > 0 { // the writer alone changes pend
			pendLast = p[len(p)-1].Cursor
		}
		var err error
		if d, err = loadState(tx, doc, pendLast); err != nil {
			return nil, err
		}
	}
	staged[doc] = &d
	return &d, nil
}

// stageAppend admits r and adds its records to the wal value. The records
// to publish alias wal, which is never written again once appended to.
func (w *writer) stageAppend(tx *bolt.Tx, staged map[string]*docState, r *request, wal *[]byte) (pendAdd, error) {
	d, err := w.state(tx, staged, r.doc)
	if err != nil {
		return pendAdd{}, err
	}
	if err := d.admitAppend(r.doc, r.recs); err != nil {
		return pendAdd{}, err
	}
	add := pendAdd{doc: r.doc, recs: make([]Record, len(r.recs))}
	for i, rec := range r.recs {
		*wal = appendWALRecord(*wal, r.doc, rec)
		b := *wal
		add.recs[i] = Record{Cursor: rec.Cursor, Origin: rec.Origin, Commit: b[len(b)-len(rec.Commit) : len(b) : len(b)]}
	}
	d.last = r.recs[len(r.recs)-1].Cursor
	return add, nil
}

// stageSnapshot admits r's snapshot and writes it, its metadata and the
// trim of records it retires. The first error is the caller's outcome, the
// second fails the transaction.
func (w *writer) stageSnapshot(tx *bolt.Tx, staged map[string]*docState, r *request) (error, error) {
	d, err := w.state(tx, staged, r.doc)
	if err != nil {
		return err, nil
	}
	next, err := d.admitSnapshot(r.doc, r.snap, w.opts)
	if err != nil {
		return err, nil
	}
	if err := tx.Bucket(bucketDocs).Put([]byte(r.doc), encodeMeta(&next)); err != nil {
		return nil, err
	}
	if err := tx.Bucket(bucketSnaps).Put([]byte(r.doc), r.snap.State); err != nil {
		return nil, err
	}
	if next.floor > 0 {
		if err := trimLog(tx, r.doc, next.floor); err != nil {
			return nil, err
		}
	}
	*d = next
	return nil, nil
}

// fold checkpoints the wal in a transaction of its own; as a probe it also
// writes a counter, so it proves the disk takes writes even when the wal is
// empty. Success clears a failure.
func (w *writer) fold(probe bool) error {
	tx, err := w.s.db.Begin(true)
	if err == nil {
		if probe {
			meta := tx.Bucket(bucketMeta)
			var n uint64
			if v := meta.Get(keyProbe); len(v) == 8 {
				n = binary.BigEndian.Uint64(v)
			}
			err = meta.Put(keyProbe, encodeU64(n+1))
		}
		if err == nil {
			_, _, err = checkpoint(tx)
		}
		if err == nil && w.opts.Fault != nil {
			err = w.opts.Fault()
		}
		if err != nil {
			tx.Rollback()
		} else {
			err = tx.Commit()
		}
	}
	if err != nil {
		w.fail(err)
		return unavailable("", err)
	}
	w.s.pmu.Lock()
	w.s.pend = make(map[string][]Record)
	w.s.pmu.Unlock()
	w.walRecords, w.walBytes = 0, 0
	clear(w.cache)
	if w.failed != nil {
		w.failed = nil
		w.s.failure.Store(nil)
		w.timer.Stop()
		if w.opts.HealthChanged != nil {
			w.opts.HealthChanged(nil)
		}
	}
	return nil
}

func (w *writer) failBatch(batch []*request, err error) {
	w.fail(err)
	for _, r := range batch {
		r.reply(unavailable(r.doc, err))
	}
}

// fail marks the store failed: writes are refused until a probe succeeds.
// The cache is dropped, because after a failed commit only the file says
// what landed.
func (w *writer) fail(err error) {
	first := w.failed == nil
	w.failed = err
	w.s.failure.Store(&err)
	clear(w.cache)
	w.timer.Reset(w.opts.ProbeInterval)
	if first && w.opts.HealthChanged != nil {
		w.opts.HealthChanged(err)
	}
}
