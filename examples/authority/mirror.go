package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/weftgate/weftgate/bridge/client"
	"github.com/weftgate/weftgate/protocol/document"
)

// mirror follows the claimed documents' commit streams, keeps each one as
// a protocol/document, and saves it after every event.
type mirror struct {
	store dirStore
	log   *slog.Logger
	// fetch reads a document whole: for one first seen by a commit (which
	// does not carry its root), or one whose commit did not apply here.
	fetch func(ctx context.Context, name string) (client.State, uint64, error)
	saved func(name string, cursor uint64) // nil, or told of every save

	mu   sync.Mutex
	docs map[string]*held
}

type held struct {
	doc    *document.Document
	cursor uint64
}

func newMirror(store dirStore, log *slog.Logger, fetch func(context.Context, string) (client.State, uint64, error)) *mirror {
	return &mirror{store: store, log: log, fetch: fetch, docs: map[string]*held{}}
}

// preload holds what the store has, so commits after it apply.
func (m *mirror) preload(names map[string]uint64) error {
	for name := range names {
		l, err := m.store.Load(name)
		if err != nil {
			return err
		}
		if l == nil {
			continue
		}
		h, err := hold(l.State, l.Cursor)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		m.docs[name] = h
	}
	return nil
}

func hold(st client.State, cursor uint64) (*held, error) {
	d := document.New(st.Root.ID, st.Root.Kind, document.Limits{})
	if len(st.Commit.Deltas) > 0 {
		if _, err := d.Apply(st.Commit); err != nil {
			return nil, err
		}
	}
	return &held{doc: d, cursor: cursor}, nil
}

// Event is the Subscribe callback. Its error ends the subscription, so
// only the store failing returns one.
func (m *mirror) Event(ctx context.Context, ev client.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch ev.Kind {
	case client.SnapshotEvent:
		h, err := hold(client.State{Root: ev.Root, Commit: ev.Commit}, ev.Cursor)
		if err != nil {
			return m.refetch(ctx, ev.Document, err)
		}
		m.docs[ev.Document] = h
	case client.CommitEvent:
		h := m.docs[ev.Document]
		switch {
		case h == nil:
			return m.refetch(ctx, ev.Document, nil)
		case ev.Cursor <= h.cursor:
			return nil // the fetched state already has it
		}
		if _, err := h.doc.Apply(ev.Commit); err != nil {
			return m.refetch(ctx, ev.Document, err)
		}
		h.cursor = ev.Cursor
	default:
		return nil
	}
	return m.save(ev.Document)
}

// refetch replaces a document with the gateway's state of it.
func (m *mirror) refetch(ctx context.Context, name string, why error) error {
	if why != nil {
		m.log.Warn("a commit did not apply to the mirror; reading the document whole", "document", name, "err", why)
	}
	st, cur, err := m.fetch(ctx, name)
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	h, err := hold(st, cur)
	if err != nil {
		return fmt.Errorf("%s: the gateway's state does not apply: %w", name, err)
	}
	m.docs[name] = h
	return m.save(name)
}

func (m *mirror) save(name string) error {
	h := m.docs[name]
	id, kind := h.doc.Root()
	if err := m.store.Save(name, client.State{Root: client.Root{ID: id, Kind: kind}, Commit: h.doc.Snapshot()}, h.cursor); err != nil {
		return fmt.Errorf("saving %s: %w", name, err)
	}
	if m.saved != nil {
		m.saved(name, h.cursor)
	}
	return nil
}
