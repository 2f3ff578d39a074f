// Package gateway is weftgate's core: the WebSocket endpoint browsers running
// the aweft client connect to, one hub per open document, and the path a
// commit takes from a link through the authority and the store to every other
// consumer of its document.
//
// Ownership: each document hub is one goroutine that alone owns the
// document's replica, its cursor and its members. Each connection has a
// reader goroutine (socket to link) and a loop goroutine that alone owns the
// connection's link and writes its socket. Everything else talks to them over
// bounded queues. A connection that cannot keep up is ended with the fault
// slow-consumer (or write-timeout); it never stalls a hub. The hub's rules
// that need no I/O live in gateway/docsm as pure state machines the hub
// drives (the commit pipeline, what a member is owed, the log to the
// store), tested by transcript.
//
// The gateway knows nothing of gRPC: the authority, the identifier, the
// request-channel calls and the store are interfaces here, implemented in
// bridge/ (over gRPC) or by the local defaults.
package gateway
