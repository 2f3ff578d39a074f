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
// slow-consumer (or write-timeout); it never stalls a hub. A hub's inputs
// are a closed set of types (hubmsg.go); every store call runs off it and
// comes back as an input. The document's rules that need no I/O live in
// gateway/docsm as pure state machines the hub drives (the replica and its
// size bound, the commit pipeline, what a member is owed, the log to the
// store and its recovery, admission, the creator's hold, idle unload, the
// waiters), tested by transcript (decision 028). Durable commits go once
// into the document's tail (gateway/tail), from which every link and
// subscriber reads at its own cursor (decision 031); a document of 100
// links or more wakes them once per a wait that grows with them, up to
// Config.FanoutInterval, rather than per append (decision 036). A link
// keeps no window of what it sent and borrows its scratch per write
// (decision 040).
//
// Several nodes: on a store other nodes append to (Follower, a log on NATS
// JetStream), a hub follows its document's log, delivers what others
// appended, and takes back and decides again commits whose append lost its
// cursor to another node, after the winner's records its follow brings
// (follow.go, decision 033).
//
// The gateway knows nothing of gRPC: the authority, the identifier, the
// request-channel calls and the store are interfaces here, implemented in
// bridge/ (over gRPC) or by the local defaults.
package gateway
