package soak

import (
	"testing"
	"time"
)

func TestFor(t *testing.T) {
	t.Setenv(Env, "")
	if got := For(time.Second); got != time.Second {
		t.Fatalf("no soak: %v", got)
	}
	t.Setenv(Env, "1m")
	if got := For(time.Second); got != time.Minute {
		t.Fatalf("soak 1m: %v", got)
	}
	if got := For(time.Hour); got != time.Hour {
		t.Fatalf("a soak shorter than the CI figure must not shorten it: %v", got)
	}
	if !Active() {
		t.Fatal("Active with 1m")
	}
}

func TestUntil(t *testing.T) {
	t.Setenv(Env, "")
	start := time.Now()
	if !Until(start, 2, 3) || Until(start, 3, 3) {
		t.Fatal("without a soak, exactly min rounds")
	}
	t.Setenv(Env, "1h")
	if !Until(start, 10, 3) {
		t.Fatal("within the soak, more rounds")
	}
	if Until(start.Add(-2*time.Hour), 10, 3) {
		t.Fatal("past the soak, no more rounds")
	}
}

func TestMalformedPanics(t *testing.T) {
	t.Setenv(Env, "ten minutes")
	defer func() {
		if recover() == nil {
			t.Fatal("a malformed soak must not pass as a short run")
		}
	}()
	For(time.Second)
}
