package jsstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/weftgate/weftgate/gateway/store"
)

// Record headers. The cursor is in a header, so every node reads the same
// number off the same message; the origin is escaped because a header
// value cannot hold every byte.
const (
	hdrCursor = "Weft-Cursor"
	hdrOrigin = "Weft-Origin"
	// hdrCount is on a message that packs several records (decision 039):
	// its cursor is the first's, and its data each record's origin and
	// commit, each after its length as a uvarint. A message without it is
	// one record, as every message was before.
	hdrCount = "Weft-Records"
)

// packHead bounds the header bytes of a packed message (the cursor, the
// count, the expected sequence and the batch headers).
const packHead = 1024

// RecordOverhead bounds the header bytes a record adds to its commit (the
// cursor, the escaped origin, the expected sequence, the batch headers):
// a commit of at most the server's max_payload less this always fits.
const RecordOverhead = 1024 + 3*store.MaxOriginBytes

// maxCachedDocs bounds the per-document write state a Store keeps; idle
// entries beyond it are dropped and read again from the server.
const maxCachedDocs = 4096

// Store is a store.Store on NATS JetStream. Several Stores on several
// connections, in several processes, may share one stream: appends are
// conditional on the document's last record, so exactly one of two
// appends at the same cursor lands.
type Store struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	stream jetstream.Stream
	kv     jetstream.KeyValue
	obj    jetstream.ObjectStore
	o      Options

	life    context.Context // ended by Close, ends every Follow
	end     context.CancelFunc
	mu      sync.Mutex
	closed  bool
	ops     sync.WaitGroup
	docs    map[string]*docCache
	failed  error // non-nil while writes fail
	healthM sync.Mutex
}

var _ store.Store = (*Store)(nil)

// docCache is what this node knows of a document's end, so that an Append
// costs one publish. It is a hint: the server checks every append.
type docCache struct {
	mu      sync.Mutex // serialises this node's writes to the document
	refs    int        // guarded by Store.mu
	ok      bool
	m       meta
	last    uint64 // cursor of the last record (or the snapshot's)
	lastSeq uint64 // stream sequence of the last record, 0 when none
}

// meta is a document's KV entry.
type meta struct {
	Name     string `json:"name"`
	Gen      string `json:"gen"` // new for each creation: a recreated name never sees old records
	Root     []byte `json:"root"`
	Kind     uint8  `json:"kind"`
	Snapshot uint64 `json:"snapshot"`
	Floor    uint64 `json:"floor"`
	State    []byte `json:"state,omitempty"`  // the snapshot's state when small
	Object   string `json:"object,omitempty"` // else its object's name

	rev uint64
}

// Open makes sure the stream, the KV bucket and the object store exist
// with o's settings and returns a Store on nc. The caller owns nc: Close
// does not close it. Give nc nats.ReconnectBufSize(-1) so that writes
// during a disconnection fail at once instead of waiting in a buffer.
func Open(ctx context.Context, nc *nats.Conn, o Options) (*Store, error) {
	o = o.withDefaults()
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(o.Timeout))
	if err != nil {
		return nil, unavailable("", err)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	st, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:               o.Stream,
		Description:        "weftgate document logs",
		Subjects:           []string{o.Subject + ".>"},
		Storage:            jetstream.FileStorage,
		Replicas:           o.Replicas,
		AllowDirect:        true,
		AllowAtomicPublish: true,
		MaxConsumers:       o.MaxFollows,
	})
	if err != nil {
		return nil, unavailable("", fmt.Errorf("stream %s: %w", o.Stream, err))
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      o.Docs,
		Description: "weftgate documents",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    o.Replicas,
	})
	if err != nil {
		return nil, unavailable("", fmt.Errorf("kv %s: %w", o.Docs, err))
	}
	obj, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket:      o.Snapshots,
		Description: "weftgate snapshot states",
		Storage:     jetstream.FileStorage,
		Replicas:    o.Replicas,
	})
	if err != nil {
		return nil, unavailable("", fmt.Errorf("object store %s: %w", o.Snapshots, err))
	}
	life, end := context.WithCancel(context.Background())
	return &Store{nc: nc, js: js, stream: st, kv: kv, obj: obj, o: o, life: life, end: end, docs: map[string]*docCache{}}, nil
}

// enter admits one operation on doc unless the store is closed. While
// the connection is down it refuses at once rather than wait for a
// timeout.
func (s *Store) enter(ctx context.Context, doc string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return &store.Error{Reason: store.Closed, Doc: doc}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !s.nc.IsConnected() {
		err := fmt.Errorf("nats connection %s", s.nc.Status())
		s.setHealth(err)
		return unavailable(doc, err)
	}
	s.ops.Add(1)
	return nil
}

// errTimeout is the cause of a request that ran out of Options.Timeout,
// as opposed to one whose caller gave up.
var errTimeout = errors.New("jsstore: no answer from NATS within Options.Timeout")

// timeout bounds ctx by Options.Timeout when it has no deadline.
func (s *Store) timeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, s.o.Timeout, errTimeout)
}

// key is a document's KV key and subject token: a hash, so any name of
// up to MaxNameBytes bytes gives a short token of safe characters. The
// entry keeps the name, and a different name under a key is refused.
func key(doc string) string {
	h := sha256.Sum256([]byte(doc))
	return base64.RawURLEncoding.EncodeToString(h[:18])
}

// base is the subject prefix of one generation of a document.
func (s *Store) base(doc string, m *meta) string {
	return s.o.Subject + "." + key(doc) + "." + m.Gen
}

// block is the subject of the record at cursor c.
func block(base string, c uint64) string {
	return base + "." + strconv.FormatUint((c-1)/blockRecords, 10)
}

// fail turns an error from NATS into a store error: Unavailable with the
// cause, and the store marked failed unless the caller's context ended.
func (s *Store) fail(ctx context.Context, doc string, err error) error {
	var se *store.Error
	if errors.As(err, &se) {
		return err
	}
	if ctx.Err() != nil && context.Cause(ctx) != errTimeout {
		return &store.Error{Reason: store.Unavailable, Doc: doc, Message: "interrupted", Err: errors.Join(ctx.Err(), err)}
	}
	s.setHealth(err)
	return unavailable(doc, err)
}

func unavailable(doc string, err error) error {
	return &store.Error{Reason: store.Unavailable, Doc: doc, Err: err}
}

func errorf(r store.Reason, doc, format string, args ...any) error {
	return &store.Error{Reason: r, Doc: doc, Message: fmt.Sprintf(format, args...)}
}

// setHealth records whether NATS answers, telling HealthChanged of a
// change.
func (s *Store) setHealth(err error) {
	s.healthM.Lock()
	defer s.healthM.Unlock()
	if (s.failed == nil) == (err == nil) {
		return
	}
	s.failed = err
	if s.o.HealthChanged != nil {
		s.o.HealthChanged(err)
	}
}

func (s *Store) healthErr() error {
	s.healthM.Lock()
	defer s.healthM.Unlock()
	return s.failed
}

// getMeta reads doc's entry.
func (s *Store) getMeta(ctx context.Context, doc string) (meta, error) {
	e, err := s.kv.Get(ctx, key(doc))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return meta{}, errorf(store.UnknownDocument, doc, "no such document")
	}
	if err != nil {
		return meta{}, s.fail(ctx, doc, err)
	}
	var m meta
	if err := json.Unmarshal(e.Value(), &m); err != nil || len(m.Root) != 12 || m.Gen == "" {
		return meta{}, &store.Error{Reason: store.Corrupt, Doc: doc, Message: "document entry does not decode", Err: err}
	}
	if m.Name != doc {
		return meta{}, errorf(store.Corrupt, doc, "key %s holds document %q: a hash collision", key(doc), m.Name)
	}
	m.rev = e.Revision()
	return m, nil
}

// lastRecord reads the cursor and sequence of the newest record of m's
// generation; ok is false when it has none.
func (s *Store) lastRecord(ctx context.Context, doc string, m *meta) (cursor, seq uint64, ok bool, err error) {
	msg, err := s.stream.GetLastMsgForSubject(ctx, s.base(doc, m)+".*")
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, s.fail(ctx, doc, err)
	}
	c, err := lastCursor(doc, msg)
	if err != nil {
		return 0, 0, false, err
	}
	return c, msg.Sequence, true, nil
}

// state reads doc's end: its entry and its last cursor and sequence.
func (s *Store) state(ctx context.Context, doc string) (m meta, last, lastSeq uint64, err error) {
	if m, err = s.getMeta(ctx, doc); err != nil {
		return m, 0, 0, err
	}
	c, seq, ok, err := s.lastRecord(ctx, doc, &m)
	if err != nil {
		return m, 0, 0, err
	}
	if !ok || c < m.Snapshot {
		return m, m.Snapshot, seq, nil
	}
	return m, c, seq, nil
}

func cursorOf(doc string, h nats.Header) (uint64, error) {
	c, err := strconv.ParseUint(h.Get(hdrCursor), 10, 64)
	if err != nil || c == 0 {
		return 0, &store.Error{Reason: store.Corrupt, Doc: doc, Message: "record without a cursor", Err: err}
	}
	return c, nil
}

// head is a message's first cursor and how many records it holds; packed
// says they are packed (decision 039), not one record as the data.
func head(doc string, msg *jetstream.RawStreamMsg) (first, count uint64, packed bool, err error) {
	first, err = cursorOf(doc, msg.Header)
	if err != nil {
		return 0, 0, false, err
	}
	n := msg.Header.Get(hdrCount)
	if n == "" {
		return first, 1, false, nil
	}
	// Each packed record takes at least two bytes: a count past the
	// data's length is a lie, and must not size an allocation.
	count, err = strconv.ParseUint(n, 10, 64)
	if err != nil || count == 0 || count > uint64(len(msg.Data)) {
		return 0, 0, false, &store.Error{Reason: store.Corrupt, Doc: doc, Message: fmt.Sprintf("record %d: bad count %q", first, n)}
	}
	return first, count, true, nil
}

// recordsOf appends to dst the records one message holds, in cursor order.
func recordsOf(dst []store.Record, doc string, msg *jetstream.RawStreamMsg) ([]store.Record, error) {
	c, count, packed, err := head(doc, msg)
	if err != nil {
		return nil, err
	}
	if !packed {
		origin, err := url.QueryUnescape(msg.Header.Get(hdrOrigin))
		if err != nil {
			return nil, &store.Error{Reason: store.Corrupt, Doc: doc, Message: "bad origin", Err: err}
		}
		return append(dst, store.Record{Cursor: c, Commit: msg.Data, Origin: origin}), nil
	}
	recs, n := dst, uint64(0)
	for b := msg.Data; n < count; c++ {
		var origin, commit []byte
		if origin, b = field(b); origin != nil {
			commit, b = field(b)
		}
		if commit == nil || len(origin) > store.MaxOriginBytes {
			return nil, &store.Error{Reason: store.Corrupt, Doc: doc, Message: fmt.Sprintf("record %d is cut short", c)}
		}
		recs = append(recs, store.Record{Cursor: c, Commit: commit, Origin: string(origin)})
		if n++; n == count && len(b) != 0 {
			return nil, &store.Error{Reason: store.Corrupt, Doc: doc, Message: fmt.Sprintf("%d bytes after record %d", len(b), c)}
		}
	}
	return recs, nil
}

// field reads one length-prefixed field off b: nil when b is too short.
func field(b []byte) (f, rest []byte) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil
	}
	return b[k : k+int(n) : k+int(n)], b[k+int(n):]
}

// lastCursor is the cursor of the last record a message holds.
func lastCursor(doc string, msg *jetstream.RawStreamMsg) (uint64, error) {
	first, count, _, err := head(doc, msg)
	if err != nil {
		return 0, err
	}
	return first + count - 1, nil
}

// messages packs recs into as few messages as it can: the records of one
// block (a message never spans two, so a read from a block's first message
// finds every record of it) in at most limit bytes each.
func messages(base string, recs []store.Record, limit int64) []*nats.Msg {
	var out []*nats.Msg
	for len(recs) > 0 {
		n, size := 1, int64(packHead+packedSize(recs[0]))
		for n < len(recs) && block(base, recs[n].Cursor) == block(base, recs[0].Cursor) {
			next := size + int64(packedSize(recs[n]))
			if limit > 0 && next > limit {
				break
			}
			n, size = n+1, next
		}
		m := nats.NewMsg(block(base, recs[0].Cursor))
		m.Header.Set(hdrCursor, strconv.FormatUint(recs[0].Cursor, 10))
		if n == 1 {
			m.Data = recs[0].Commit
			if recs[0].Origin != "" {
				m.Header.Set(hdrOrigin, url.QueryEscape(recs[0].Origin))
			}
		} else {
			m.Header.Set(hdrCount, strconv.Itoa(n))
			m.Data = make([]byte, 0, size-packHead)
			for _, r := range recs[:n] {
				m.Data = binary.AppendUvarint(m.Data, uint64(len(r.Origin)))
				m.Data = append(m.Data, r.Origin...)
				m.Data = binary.AppendUvarint(m.Data, uint64(len(r.Commit)))
				m.Data = append(m.Data, r.Commit...)
			}
		}
		out = append(out, m)
		recs = recs[n:]
	}
	return out
}

func packedSize(r store.Record) int {
	return 2*binary.MaxVarintLen64 + len(r.Origin) + len(r.Commit)
}

func (m *meta) info(doc string, last uint64) store.DocInfo {
	i := store.DocInfo{Name: doc, RootKind: m.Kind, Snapshot: m.Snapshot, Floor: m.Floor, Last: last}
	copy(i.Root[:], m.Root)
	return i
}

// acquire returns doc's cache entry, held until release.
func (s *Store) acquire(doc string) *docCache {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.docs[doc]
	if d == nil {
		d = &docCache{}
		s.docs[doc] = d
	}
	d.refs++
	return d
}

func (s *Store) release(doc string, d *docCache) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d.refs--
	if d.refs == 0 && len(s.docs) > maxCachedDocs {
		delete(s.docs, doc)
	}
}

// refresh reads d's document end from the server.
func (s *Store) refresh(ctx context.Context, doc string, d *docCache) error {
	d.ok = false
	m, last, lastSeq, err := s.state(ctx, doc)
	if err != nil {
		return err
	}
	d.m, d.last, d.lastSeq, d.ok = m, last, lastSeq, true
	return nil
}

// Append implements store.Store. Records go out in atomic batches of at
// most Options.BatchRecords; the first message of each carries the
// expected last sequence of the document's subjects, so a batch lands
// whole right after the record this node saw last, or not at all.
func (s *Store) Append(ctx context.Context, doc string, recs []store.Record) error {
	if err := store.CheckAppend(doc, recs); err != nil {
		return err
	}
	if err := s.enter(ctx, doc); err != nil {
		return err
	}
	defer s.ops.Done()
	if len(recs) == 0 {
		return nil
	}
	if limit := s.nc.MaxPayload(); limit > 0 {
		for _, r := range recs {
			if int64(len(r.Commit)+RecordOverhead) > limit {
				return errorf(store.TooLarge, doc, "record of %d bytes and its headers exceed the NATS server's max_payload (%d)", len(r.Commit), limit)
			}
		}
	}
	d := s.acquire(doc)
	defer s.release(doc, d)
	d.mu.Lock()
	defer d.mu.Unlock()

	if !d.ok || recs[0].Cursor != d.last+1 {
		// The hint may be stale: another node may have appended.
		tctx, cancel := s.timeout(ctx)
		err := s.refresh(tctx, doc, d)
		cancel()
		if err != nil {
			return err
		}
	}
	if recs[0].Cursor != d.last+1 {
		return errorf(store.CursorMismatch, doc, "first cursor %d, want %d", recs[0].Cursor, d.last+1)
	}
	base := s.base(doc, &d.m)
	for i := 0; i < len(recs); i += s.o.BatchRecords {
		chunk := recs[i:min(len(recs), i+s.o.BatchRecords)]
		tctx, cancel := s.timeout(ctx) // each batch has its own bound
		seq, err := s.publish(tctx, base, d.lastSeq, chunk)
		cancel()
		if err != nil {
			d.ok = false
			if isConflict(err) && i == 0 {
				return &store.Error{Reason: store.CursorMismatch, Doc: doc, Message: fmt.Sprintf("another writer appended at cursor %d", recs[0].Cursor), Err: err}
			}
			if i > 0 {
				// Earlier batches landed: the caller must read Info.
				return &store.Error{Reason: store.Unavailable, Doc: doc, Message: fmt.Sprintf("records %d.. did not land after %d that did", chunk[0].Cursor, i), Err: err}
			}
			return s.fail(ctx, doc, err)
		}
		d.last, d.lastSeq = chunk[len(chunk)-1].Cursor, seq
	}
	s.setHealth(nil)
	return nil
}

// publish appends recs after the record at sequence lastSeq, as one
// message or one atomic batch of them, and returns the sequence of the
// last one.
func (s *Store) publish(ctx context.Context, base string, lastSeq uint64, recs []store.Record) (uint64, error) {
	// Records packed in one message are one conditional publish; an atomic
	// batch of several messages costs the server more per batch than per
	// record (on a stream of one replica in files, a store of its own).
	msgs := messages(base, recs, s.nc.MaxPayload())
	msgs[0].Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(lastSeq, 10))
	msgs[0].Header.Set(jetstream.ExpectedLastSubjSeqSubjHeader, base+".*")
	if len(msgs) == 1 {
		ack, err := s.js.PublishMsg(ctx, msgs[0])
		if err != nil {
			return 0, err
		}
		return ack.Sequence, nil
	}
	// No ack of the first message: the batch is bounded (BatchRecords),
	// so flow control buys nothing, and that ack is a second round trip
	// on every append of more than one record. The server checks the
	// expected sequence when the batch commits, all or nothing as before.
	ack, err := jetstreamext.PublishMsgBatch(ctx, s.js, msgs, jetstreamext.BatchFlowControl{AckTimeout: s.o.Timeout})
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}

// isConflict reports whether err is JetStream refusing an expected last
// sequence: another writer got there first.
func isConflict(err error) bool {
	var je jetstream.JetStreamError
	if !errors.As(err, &je) || je.APIError() == nil {
		return false
	}
	ae := je.APIError()
	return ae.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || ae.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
}

// newGen names a new generation of a document.
func newGen() string { return nuid.Next() }
