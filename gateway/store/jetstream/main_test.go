package jsstore

import (
	"testing"

	"go.uber.org/goleak"
)

// Every store, connection, Follow and embedded server a test starts is
// gone when it ends.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
