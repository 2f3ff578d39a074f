package storetest

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/weftgate/weftgate/gateway/store"
)

// Suite describes one implementation to the conformance suite.
type Suite struct {
	// Open makes a fresh, empty store for one test and closes it at
	// cleanup. It honours Retain and HealthChanged; when Break is nil it
	// also honours Fault.
	Open func(t *testing.T, o store.Options) store.Store

	// Break, when set, makes the medium under s fail (a remote log's
	// server stopped) and returns mend, which brings it back and returns
	// once s can reach it again. When nil, the failure cases inject an
	// I/O error through Options.Fault, as a failing disk would.
	Break func(t *testing.T, s store.Store) (mend func())

	// ReadsFailWhenBroken says reads fail with store-unavailable too
	// while the medium is broken (a remote log), where a local store
	// keeps serving them.
	ReadsFailWhenBroken bool
}

// fault breaks and mends one store's medium for the failure cases.
type fault struct {
	t           *testing.T
	cause       error // the injected error, or nil when the medium's own
	breakIt     func()
	mendIt      func()
	readsBroken bool
}

func (su Suite) openFaulty(t *testing.T, o store.Options) (store.Store, *fault) {
	f := &fault{t: t, readsBroken: su.ReadsFailWhenBroken}
	if su.Break == nil {
		var failing atomic.Bool
		f.cause = errors.New("injected: I/O error")
		o.Fault = func() error {
			if failing.Load() {
				return f.cause
			}
			return nil
		}
		f.breakIt = func() { failing.Store(true) }
		f.mendIt = func() { failing.Store(false) }
		return su.Open(t, o), f
	}
	s := su.Open(t, o)
	f.breakIt = func() { f.mendIt = su.Break(t, s) }
	return s, f
}

func (f *fault) mend() { f.mendIt() }

// wantCause checks err keeps the medium's error as its cause.
func (f *fault) wantCause(t *testing.T, err error) {
	t.Helper()
	if f.cause != nil && !errors.Is(err, f.cause) {
		t.Fatalf("the injected cause is not kept: %v", err)
	}
	if f.cause == nil && errors.Unwrap(err) == nil {
		t.Fatalf("no cause kept: %v", err)
	}
}

// wantReads checks what reads give while broken: doc's records from..to
// for a local store, store-unavailable for a remote one.
func (f *fault) wantReads(t *testing.T, s store.Store, doc string, from, to uint64) {
	t.Helper()
	if !f.readsBroken {
		WantRecords(t, doc, Read(t, s, doc, from, 0), from, to)
		return
	}
	_, err := s.Read(t.Context(), doc, from, 0)
	WantReason(t, err, store.Unavailable)
}
