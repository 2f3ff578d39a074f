// Command gateway is the weftgate binary: it reads settings from flags and
// WEFTGATE_* environment variables, opens the embedded store, serves the aweft
// WebSocket beside /healthz, /readyz, /metrics and /status, binds the gRPC
// listener for backends, logs with log/slog, and drains on SIGTERM or SIGINT.
//
// Usage: gateway [serve|config|version|help] [flags]. With no command it
// serves. "config" prints the effective settings as JSON (secrets
// redacted); "version" prints the build.
//
// It holds no protocol or document logic (that is gateway/ and protocol/),
// and it does not speak gRPC itself: the bridge plugs in through grpcServe.
package main
