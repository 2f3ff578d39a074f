// Command weftpeer is an aweft peer on the command line: it opens a
// document on any gateway's WebSocket URL, as a browser would, and prints
// its state as JSON; with -follow it then prints each commit the gateway
// sends, one JSON line each; with -write it writes one commit and waits for
// the gateway's verdict. People use it to see what a document holds, to
// script a smoke test, and to debug.
//
//	weftpeer [flags] URL DOCUMENT
//
// The JSON is the aweft fixtures' view (protocol/commit and
// protocol/document): a document is {"root", "observables"} with every id,
// a commit {"deltas": [...]}, a delta {"type", "id", "ref", "value"}. A
// line -follow prints is a commit -write takes.
//
// The gateway answers only refusals, so -write learns that its commit was
// applied from a second link to the same document, which receives it as
// every other member does (decision 017).
//
// It creates a document only with -create, and then empty; it does not
// resolve conflicts, retry, or speak the request channel, and it holds one
// document for as long as it runs.
package main
