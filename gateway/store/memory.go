package store

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// Memory is a Store in memory, for tests and for a gateway run without a
// disk. It follows the same rules as the bbolt store, including retention
// and the Fault hook (probed again by Healthy); nothing survives the process.
type Memory struct {
	opts Options

	mu     sync.RWMutex
	docs   map[string]*memDoc
	failed error
	closed bool
}

type memDoc struct {
	docState
	state []byte
	recs  []Record // cursors floor+1 .. last, in order
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty memory store with default options.
func NewMemory() *Memory { return NewMemoryOptions(Options{}) }

// NewMemoryOptions returns an empty memory store; the options that concern
// files and batching are ignored.
func NewMemoryOptions(o Options) *Memory {
	return &Memory{opts: o.withDefaults(), docs: make(map[string]*memDoc)}
}

// open checks the store is open and has not failed; called with mu held.
func (m *Memory) open(doc string) error {
	if m.closed {
		return ErrClosed
	}
	if m.failed != nil {
		return unavailable(doc, m.failed)
	}
	return nil
}

// fault runs the Fault hook for one write; called with mu held.
func (m *Memory) fault(doc string) error {
	if m.opts.Fault != nil {
		if err := m.opts.Fault(); err != nil {
			m.failed = err
			if m.opts.HealthChanged != nil {
				m.opts.HealthChanged(err)
			}
			return unavailable(doc, err)
		}
	}
	return nil
}

func (m *Memory) Append(ctx context.Context, doc string, recs []Record) error {
	if _, err := checkAppend(doc, recs); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(recs) == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.open(doc); err != nil {
		return err
	}
	d := m.docs[doc]
	var st docState
	if d != nil {
		st = d.docState
	}
	if err := st.admitAppend(doc, recs); err != nil {
		return err
	}
	if err := m.fault(doc); err != nil {
		return err
	}
	for _, r := range recs {
		d.recs = append(d.recs, Record{Cursor: r.Cursor, Commit: slices.Clone(r.Commit), Origin: r.Origin})
	}
	d.last = recs[len(recs)-1].Cursor
	return nil
}

func (m *Memory) PutSnapshot(ctx context.Context, doc string, s Snapshot) error {
	if err := checkSnapshot(doc, s); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.open(doc); err != nil {
		return err
	}
	d := m.docs[doc]
	if d == nil {
		d = &memDoc{}
	}
	next, err := d.admitSnapshot(doc, s, m.opts)
	if err != nil {
		return err
	}
	if err := m.fault(doc); err != nil {
		return err
	}
	d.docState = next
	d.state = nil
	if len(s.State) > 0 {
		d.state = slices.Clone(s.State)
	}
	i := 0
	for i < len(d.recs) && d.recs[i].Cursor <= d.floor {
		i++
	}
	d.recs = slices.Clone(d.recs[i:])
	m.docs[doc] = d
	return nil
}

// doc returns doc's entry for a read; called with mu held.
func (m *Memory) doc(doc string) (*memDoc, error) {
	if err := checkName(doc); err != nil {
		return nil, err
	}
	if m.closed {
		return nil, ErrClosed
	}
	d := m.docs[doc]
	if d == nil {
		return nil, errorf(UnknownDocument, doc, "no such document")
	}
	return d, nil
}

func (m *Memory) Load(ctx context.Context, doc string) (*Snapshot, []Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	d, err := m.doc(doc)
	if err != nil {
		return nil, nil, err
	}
	snap := &Snapshot{Cursor: d.snapshot, State: slices.Clone(d.state), Root: d.root, RootKind: d.kind}
	return snap, copyFrom(d.recs, d.snapshot+1, MaxLoadRecords, MaxLoadBytes), nil
}

func (m *Memory) Read(ctx context.Context, doc string, from uint64, max int) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	d, err := m.doc(doc)
	if err != nil {
		return nil, err
	}
	from, err = d.checkRead(doc, from)
	if err != nil {
		return nil, err
	}
	return copyFrom(d.recs, from, readLimit(max), MaxReadBytes), nil
}

// copyFrom copies the records of recs (consecutive cursors) from cursor on,
// within the bounds.
func copyFrom(recs []Record, from uint64, maxCount, maxBytes int) []Record {
	if len(recs) == 0 || from > recs[len(recs)-1].Cursor {
		return nil
	}
	if from > recs[0].Cursor {
		recs = recs[from-recs[0].Cursor:]
	}
	var out []Record
	size := 0
	for _, r := range recs {
		if !take(len(out), size, len(r.Commit), maxCount, maxBytes) {
			break
		}
		size += len(r.Commit)
		out = append(out, Record{Cursor: r.Cursor, Commit: slices.Clone(r.Commit), Origin: r.Origin})
	}
	return out
}

func (m *Memory) Info(ctx context.Context, doc string) (DocInfo, error) {
	if err := ctx.Err(); err != nil {
		return DocInfo{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	d, err := m.doc(doc)
	if err != nil {
		return DocInfo{}, err
	}
	return d.info(doc), nil
}

func (m *Memory) Documents(ctx context.Context) ([]DocInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	out := make([]DocInfo, 0, len(m.docs))
	for name, d := range m.docs {
		out = append(out, d.info(name))
	}
	slices.SortFunc(out, func(a, b DocInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (m *Memory) Delete(ctx context.Context, doc string) error {
	if err := checkName(doc); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.open(doc); err != nil {
		return err
	}
	if m.docs[doc] == nil {
		return errorf(UnknownDocument, doc, "no such document")
	}
	if err := m.fault(doc); err != nil {
		return err
	}
	delete(m.docs, doc)
	return nil
}

func (m *Memory) Healthy(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if m.failed == nil {
		return nil
	}
	if m.opts.Fault != nil {
		if err := m.opts.Fault(); err != nil {
			m.failed = err
			return unavailable("", err)
		}
	}
	m.failed = nil
	if m.opts.HealthChanged != nil {
		m.opts.HealthChanged(nil)
	}
	return nil
}

func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.docs = nil
	return nil
}
