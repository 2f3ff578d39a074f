package client_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test's client is closed by its cleanup; none may leave a goroutine.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
