package gateway_test

func runChild() bool { return false }
