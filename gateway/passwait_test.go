package gateway

import (
	"testing"
	"time"
)

// A document waits for its pass in proportion to its links, up to the
// interval at FanoutMembers, and not at all when the wait would be under a
// millisecond or the pass interval is off.
func TestPassWaitGrowsWithTheLinks(t *testing.T) {
	defaults := Config{}.withDefaults()
	for _, tc := range []struct {
		cfg     Config
		members int
		want    time.Duration
	}{
		{defaults, 0, 0},
		{defaults, 2, 0},
		{defaults, 99, 0}, // 990µs: not worth a timer
		{defaults, 100, time.Millisecond},
		{defaults, 200, 2 * time.Millisecond},
		{defaults, 1000, 10 * time.Millisecond},
		{defaults, 2000, 20 * time.Millisecond},
		{defaults, 10000, 20 * time.Millisecond},
		{Config{FanoutMembers: 4, FanoutInterval: 200 * time.Millisecond}.withDefaults(), 2, 100 * time.Millisecond},
		{Config{FanoutMembers: -1}.withDefaults(), 10000, 0},
	} {
		if got := tc.cfg.passWait(tc.members); got != tc.want {
			t.Errorf("%d links, FanoutMembers %d, FanoutInterval %v: wait %v, want %v",
				tc.members, tc.cfg.FanoutMembers, tc.cfg.FanoutInterval, got, tc.want)
		}
	}
}
