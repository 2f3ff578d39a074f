package gateway_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if runGatewayProcess() {
		return
	}
	goleak.VerifyTestMain(m)
}
