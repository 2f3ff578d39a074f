package wsread

import (
	"bytes"
	"context"
	"io"
	"sync"

	"github.com/coder/websocket"
)

const (
	// scratchBytes is a new scratch buffer's size: a batched commits frame
	// of small edits fits.
	scratchBytes = 4 << 10
	// maxPooledBytes bounds the scratch buffers kept: one grown by a rare
	// large message is dropped rather than held.
	maxPooledBytes = 64 << 10
)

var scratch = sync.Pool{New: func() any {
	b := make([]byte, 0, scratchBytes)
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
	buf, err := readAll(r, (*bp)[:0])
	var msg []byte
	if err == nil {
		msg = bytes.Clone(buf)
	}
	if cap(buf) <= maxPooledBytes {
		*bp = buf[:0]
		scratch.Put(bp)
	}
	if err != nil {
		return 0, nil, err
	}
	return typ, msg, nil
}

// readAll appends r's bytes to buf until io.EOF.
func readAll(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // let append pick the growth
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
