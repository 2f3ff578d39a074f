// Package web holds the files the gateway serves to browsers, embedded so
// the binary needs no build step and no files beside it:
//
//   - aweft/: a small aweft end in JavaScript (an ES module: the commit
//     codec, the document model, frames and one reconnecting link over a
//     WebSocket), written from the spec and tested with Node's test runner
//     against the spec's fixtures and a running gateway;
//   - demo/: a shared to-do board that two tabs edit through the gateway;
//   - inspect/: the operator's read-only view of documents, links, backends
//     and key figures, fed by /status and /metrics and by opening a document
//     as an aweft peer.
//
// It does not decide where or whether the pages are served (cmd/gateway
// does), and the JavaScript is the pages' client, not a replacement for
// the aweft client applications use.
package web
