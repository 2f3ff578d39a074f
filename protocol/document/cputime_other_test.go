//go:build !unix

package document

import "time"

func cpuNow() time.Duration { return 0 }
