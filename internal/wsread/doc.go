// Package wsread reads one WebSocket message into a slice of exactly its
// size. coder/websocket's Conn.Read reads through io.ReadAll, which starts
// every message with a 512-byte buffer and grows larger ones in steps, each
// a fresh allocation and a copy: a small commit's message cost 512 bytes,
// and the commit, which aliases it, kept them all alive. Here the message is
// read into a pooled 4 KiB scratch buffer and copied out once; a larger one
// reads the rest in growing chunks, as io.ReadAll does. Visit lends a
// message that fits the scratch buffer to a function instead of copying
// it out, for a reader that is done with each message once decoded.
//
// It holds no buffer while a read waits for a message, so an idle
// connection costs nothing. It does not decode or interpret the message.
package wsread
