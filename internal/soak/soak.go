package soak

import (
	"flag"
	"fmt"
	"os"
	"time"
)

// Env is the variable that asks every test binary of a run for a soak.
const Env = "WEFTGATE_SOAK"

var soakFlag = flag.Duration("weftgate.soak", 0, "run the reliability tests for about this long each (also "+Env+")")

// For returns how long a soak test should run: the flag, else the variable,
// else short, the CI figure. A malformed variable panics with its name, so a
// soak asked for is never silently a short run.
func For(short time.Duration) time.Duration {
	if d := requested(); d > short {
		return d
	}
	return short
}

// Active reports whether the run asked for a soak.
func Active() bool { return requested() > 0 }

// Until reports, for round-counting tests, whether another round should run:
// at least min rounds, then more until the soak's time from start has passed.
func Until(start time.Time, round, min int) bool {
	if round < min {
		return true
	}
	d := requested()
	return d > 0 && time.Since(start) < d
}

func requested() time.Duration {
	if *soakFlag > 0 {
		return *soakFlag
	}
	v := os.Getenv(Env)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		panic(fmt.Sprintf("%s=%q: want a duration such as 10m", Env, v))
	}
	return d
}
