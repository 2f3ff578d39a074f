package store

import "runtime"

// waitQueued spins until n requests wait in s's queue: the writer is held
// by a test, so the count only grows.
func waitQueued(s *Bolt, n int) {
	for len(s.reqs) < n {
		runtime.Gosched()
	}
}

// closeKeepingWAL closes s without the final checkpoint, leaving the file
// as a crash right after the last commit would.
func closeKeepingWAL(s *Bolt) error {
	s.keepWAL = true
	return s.Close()
}

// pendingRecords reports how many records wait in the wal; only
// meaningful once the store is quiet.
func pendingRecords(s *Bolt) int {
	s.pmu.RLock()
	defer s.pmu.RUnlock()
	n := 0
	for _, p := range s.pend {
		n += len(p)
	}
	return n
}
