// Package peer is a small Go end of an aweft link over WebSocket: it dials a
// ws:// or wss:// URL, runs one protocol/link over the socket, and lets a Go
// program share documents by name, join documents the other end holds, make
// commits on them and watch what arrives. The gateway's tests, the load tool
// (cmd/weftload) and the command-line peer (cmd/weftpeer) use it as their
// browser.
//
// One goroutine (the loop) owns the link and every replica; a reader
// goroutine decodes binary messages into frames and hands them to the loop;
// a writer goroutine alone writes the socket, in the order the link produced
// the frames. The loop never blocks on the socket: frames wait in a backlog
// bounded in bytes (Options.MaxBacklogBytes), and a socket that cannot keep
// up ends the link with SlowConsumer rather than grow memory or drop a frame.
//
// Received commits are decoded, passed to Options.Accept when set, and
// applied to the local replica; a commit that does not decode, is not
// accepted, or that the replica refuses is answered with refused and the
// next one is still applied. (The JS end drops the whole link over a commit
// that does not decode; a refusal names the reason and spares the other
// topics.) Bytes that are not a frame value end the link and close the
// socket without a word (close status 1007); a value that is not a frame is
// answered with fault bad-frame, as the link rules say. Text messages belong
// to the request channel, which this package does not speak; they are
// ignored.
//
// It does not reconnect, resume, pick a winner in a conflict, or roll back a
// refused commit: a refusal is reported with the commit's undo, and the
// program chooses (commit the undo, Resync, or keep its version).
package peer
