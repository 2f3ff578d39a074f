package bridge

import "sync"

// watchers are the subscriptions waiting to hear of documents: the bridge
// sees every commit (Judge), every creation it allows (MayOpen) and every
// backend write, and tells the subscriptions whose pattern matches, so a
// pattern subscription picks up documents that appear after it began.
type watchers struct {
	mu     sync.Mutex
	next   uint64
	m      map[uint64]*watch
	closed bool
}

type watch struct {
	pat    pattern
	notice func(name string) // must not block
	cancel func()
}

func (w *watchers) init() { w.m = map[uint64]*watch{} }

// add registers a watch; false when the bridge is closing.
func (w *watchers) add(x *watch) (remove func(), ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, false
	}
	w.next++
	id := w.next
	w.m[id] = x
	return func() {
		w.mu.Lock()
		delete(w.m, id)
		w.mu.Unlock()
	}, true
}

func (w *watchers) closeAll() {
	w.mu.Lock()
	w.closed = true
	all := make([]*watch, 0, len(w.m))
	for _, x := range w.m {
		all = append(all, x)
	}
	w.mu.Unlock()
	for _, x := range all {
		x.cancel()
	}
}

// activity tells the watches matching name that it may have commits.
func (s *Server) activity(name string) {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	for _, x := range s.subs.m {
		if x.pat.match(name) {
			x.notice(name)
		}
	}
}
