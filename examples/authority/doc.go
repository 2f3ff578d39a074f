// Command authority is a runnable backend for a weftgate gateway, built on
// the Go SDK (bridge/client), for a new user to start beside the gateway
// and change.
//
// It claims the documents whose names start with -prefix, lets every peer
// open them, and:
//
//   - refuses commits that write under a protected path (-protect, default
//     /admin) unless the peer has a role (-role, default admin);
//   - refuses text and byte values over -max-value-bytes with the reason
//     value-too-large;
//   - keeps every claimed document in -data as <name>.json (its root,
//     cursor and state), written as its commits arrive, and answers the
//     gateway's load questions from there, so documents outlive the
//     gateway and cursors continue;
//   - with -sessions, identifies peers by their `session` cookie from a
//     JSON file of session → {id, roles}; without it peers are anonymous.
//
// It is an example, not a production store: it rewrites a document's whole
// file on every commit, keeps every claimed document in memory, and trusts
// other backends' writes.
package main
