package wsread

import (
	"bytes"
	"context"
	"io"
	"sync"

	"github.com/coder/websocket"
)

// scratchBytes is the pooled buffer's size: a batched commits frame of
// small edits fits. A larger message reads its remainder in chunks and is
// copied out once, as io.ReadAll does.
const scratchBytes = 4 << 10

var scratch = sync.Pool{New: func() any {
	b := make([]byte, scratchBytes)
	return &b
}}

// Read reads the next data message from c, as c.Read does, with the same
// errors (the read limit included), into a slice of exactly its length.
func Read(ctx context.Context, c *websocket.Conn) (websocket.MessageType, []byte, error) {
	typ, msg, lent, err := next(ctx, c)
	if lent != nil {
		msg = bytes.Clone(msg) // the whole message fitted
		scratch.Put(lent)
	}
	return typ, msg, err
}

// Visit reads the next data message from c, as Read does, and hands it to
// f. A message that fits the scratch buffer is lent, not copied: f must not
// keep it past its return. For a reader that decodes and drops each message
// (a load tool's watcher) this takes a copy and an allocation off every one.
func Visit(ctx context.Context, c *websocket.Conn, f func(websocket.MessageType, []byte)) error {
	typ, msg, lent, err := next(ctx, c)
	if err != nil {
		return err
	}
	f(typ, msg)
	if lent != nil {
		scratch.Put(lent)
	}
	return nil
}

// next reads the next message. When it fitted the scratch buffer, msg is
// in lent, which the caller puts back in the pool once done with msg.
func next(ctx context.Context, c *websocket.Conn) (typ websocket.MessageType, msg []byte, lent *[]byte, err error) {
	typ, r, err := c.Reader(ctx)
	if err != nil {
		return 0, nil, nil, err
	}
	bp := scratch.Get().(*[]byte)
	buf := *bp
	n, err := io.ReadFull(r, buf)
	if ended(err) {
		return typ, buf[:n], bp, nil
	}
	defer scratch.Put(bp) // readRest copies it out
	if err != nil {
		return 0, nil, nil, err
	}
	typ, msg, err = readRest(typ, r, buf)
	return typ, msg, nil, err
}

// readRest reads a message larger than the scratch buffer, which holds its
// first bytes, as io.ReadAll does: chunks of growing size, then one copy
// into a slice of the message's size.
func readRest(typ websocket.MessageType, r io.Reader, first []byte) (websocket.MessageType, []byte, error) {
	chunks := [][]byte{first}
	total, next := len(first), len(first)
	for {
		next += next / 2
		c := make([]byte, next)
		n, err := io.ReadFull(r, c)
		chunks = append(chunks, c[:n])
		total += n
		if ended(err) {
			break
		}
		if err != nil {
			return 0, nil, err
		}
	}
	msg := make([]byte, 0, total)
	for _, c := range chunks {
		msg = append(msg, c...)
	}
	return typ, msg, nil
}

// ended reports whether err is the message's end: io.ReadFull's own EOF or
// ErrUnexpectedEOF over the message reader's bare io.EOF. Compared by
// identity: a connection cut inside a frame is an error that wraps
// ErrUnexpectedEOF ("failed to read frame payload"), and it must not pass
// for the end of a shorter message.
func ended(err error) bool { return err == io.EOF || err == io.ErrUnexpectedEOF }
