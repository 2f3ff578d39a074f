package client_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/weftgate/weftgate/internal/buildtest"
)

// Every test's client is closed by its cleanup; none may leave a goroutine.
// The example backend the quick start test built is removed after.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { buildtest.Cleanup() }))
}
