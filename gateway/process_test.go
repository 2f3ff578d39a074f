package gateway_test

// runGatewayProcess is a hook for tests that need a gateway in another
// process (killed with SIGKILL); it is filled in by crash_test.go.
func runGatewayProcess() bool { return runChild() || runNATSChild() }
