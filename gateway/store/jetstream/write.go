package jsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weftgate/weftgate/gateway/store"
)

// rewriting holds doc's cache for a write that replaces the document's
// entry, which the cached end then no longer describes; the returned func
// lets it go.
func (s *Store) rewriting(doc string) func() {
	d := s.acquire(doc)
	d.mu.Lock()
	d.ok = false
	return func() {
		d.mu.Unlock()
		s.release(doc, d)
	}
}

// casAttempts bounds how often PutSnapshot reads the entry again after
// another node changed it under it.
const casAttempts = 5

// PutSnapshot implements store.Store. The state goes in first (inline or
// as an object), then the entry is swapped on its revision, then what the
// new floor leaves behind is purged: a crash between the steps leaves
// stray bytes, never a document pointing at nothing.
func (s *Store) PutSnapshot(ctx context.Context, doc string, snap store.Snapshot) error {
	if err := store.CheckSnapshot(doc, snap); err != nil {
		return err
	}
	if err := s.enter(ctx, doc); err != nil {
		return err
	}
	defer s.ops.Done()
	ctx, cancel := s.timeout(ctx)
	defer cancel()
	defer s.rewriting(doc)()

	for range casAttempts {
		m, last, _, err := s.state(ctx, doc)
		exists := err == nil
		if err != nil && !errors.Is(err, store.ErrUnknownDocument) {
			return err
		}
		next := meta{Name: doc, Root: snap.Root[:], Kind: snap.RootKind, Snapshot: snap.Cursor, Floor: snap.Cursor}
		if exists {
			if [12]byte(m.Root) != snap.Root || m.Kind != snap.RootKind {
				return errorf(store.RootMismatch, doc, "snapshot root differs from the document's")
			}
			if snap.Cursor < m.Snapshot || snap.Cursor > last {
				return errorf(store.SnapshotCursor, doc, "cursor %d outside [%d, %d]", snap.Cursor, m.Snapshot, last)
			}
			next.Gen, next.Floor = m.Gen, s.o.floorFor(snap.Cursor, m.Floor)
		} else {
			next.Gen = newGen()
		}
		if len(snap.State) > s.o.InlineSnapshotBytes {
			next.Object = key(doc) + "." + next.Gen + "." + strconv.FormatUint(snap.Cursor, 10) + "." + newGen()
			if _, err := s.obj.PutBytes(ctx, next.Object, snap.State); err != nil {
				return s.fail(ctx, doc, fmt.Errorf("snapshot state: %w", err))
			}
		} else if len(snap.State) > 0 {
			next.State = snap.State
		}
		val, err := json.Marshal(next)
		if err != nil {
			return err
		}
		if exists {
			_, err = s.kv.Update(ctx, key(doc), val, m.rev)
		} else {
			_, err = s.kv.Create(ctx, key(doc), val)
		}
		if err != nil {
			s.dropObject(next.Object)
			if isConflict(err) || errors.Is(err, jetstream.ErrKeyExists) {
				continue // another node changed the entry: judge again
			}
			return s.fail(ctx, doc, err)
		}
		if exists {
			if m.Object != "" && m.Object != next.Object {
				s.dropObject(m.Object)
			}
			if next.Floor > m.Floor {
				if err := s.purgeBelow(ctx, doc, &next, next.Floor+1); err != nil {
					return err
				}
			}
		}
		s.setHealth(nil)
		return nil
	}
	return errorf(store.Unavailable, doc, "the document entry kept changing under %d attempts", casAttempts)
}

// purgeBelow drops m's records in the blocks before cursor's block: the
// floor in the entry already hides them, so this only frees space, and a
// few records under the floor may stay until a later purge.
func (s *Store) purgeBelow(ctx context.Context, doc string, m *meta, cursor uint64) error {
	base := s.base(doc, m)
	msg, err := s.stream.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(block(base, cursor)))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		return s.fail(ctx, doc, err)
	}
	if err := s.stream.Purge(ctx, jetstream.WithPurgeSubject(base+".*"), jetstream.WithPurgeSequence(msg.Sequence)); err != nil {
		return s.fail(ctx, doc, err)
	}
	return nil
}

// dropObject deletes a state object nothing points at; failing, it stays
// as garbage.
func (s *Store) dropObject(name string) {
	if name == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.o.Timeout)
	defer cancel()
	_ = s.obj.Delete(ctx, name)
}

// Delete implements store.Store: the entry goes first (the document is
// gone for every node at once), then its records and state.
func (s *Store) Delete(ctx context.Context, doc string) error {
	if err := store.CheckName(doc); err != nil {
		return err
	}
	if err := s.enter(ctx, doc); err != nil {
		return err
	}
	defer s.ops.Done()
	ctx, cancel := s.timeout(ctx)
	defer cancel()
	defer s.rewriting(doc)()
	m, err := s.getMeta(ctx, doc)
	if err != nil {
		return err
	}
	if err := s.kv.Purge(ctx, key(doc), jetstream.LastRevision(m.rev)); err != nil {
		if isConflict(err) {
			return errorf(store.Unavailable, doc, "the document changed while being deleted; try again")
		}
		return s.fail(ctx, doc, err)
	}
	if err := s.stream.Purge(ctx, jetstream.WithPurgeSubject(s.base(doc, &m)+".*")); err != nil {
		return s.fail(ctx, doc, err)
	}
	s.dropObject(m.Object)
	s.setHealth(nil)
	return nil
}

// Healthy implements store.Store: when writes have been failing, or the
// connection is down, it asks JetStream for the account's info.
func (s *Store) Healthy(ctx context.Context) error {
	if err := s.enter(ctx, ""); err != nil {
		return err
	}
	defer s.ops.Done()
	if s.healthErr() == nil && s.nc.IsConnected() {
		return nil
	}
	ctx, cancel := s.timeout(ctx)
	defer cancel()
	if _, err := s.js.AccountInfo(ctx); err != nil {
		return s.fail(ctx, "", err)
	}
	s.setHealth(nil)
	return nil
}

// Close implements store.Store: it waits for operations in flight, ends
// every Follow, and leaves the connection to its owner.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.end()
	s.ops.Wait()
	return nil
}
