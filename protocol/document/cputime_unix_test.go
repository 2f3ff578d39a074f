//go:build unix

package document

import (
	"syscall"
	"time"
)

// cpuNow is the CPU time this process has used, GC workers included, so a
// benchmark can report cost that other processes on the host distort less.
func cpuNow() time.Duration {
	var r syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &r) != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
