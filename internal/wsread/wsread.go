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
	typ, r, err := c.Reader(ctx)
	if err != nil {
		return 0, nil, err
	}
	bp := scratch.Get().(*[]byte)
	defer scratch.Put(bp)
	buf := *bp
	n, err := io.ReadFull(r, buf)
	switch {
	case ended(err):
		return typ, bytes.Clone(buf[:n]), nil // the whole message fitted
	case err != nil:
		return 0, nil, err
	}
	return readRest(typ, r, buf)
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
