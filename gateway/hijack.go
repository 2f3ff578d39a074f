package gateway

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"sync"
)

// The buffers a link keeps for its life. net/http hands a hijacked
// connection 4 KiB for reading and 4 KiB for writing, and coder/websocket
// keeps whatever it is handed: 8 KiB of a 16 KiB per-link budget. Frames are
// small; a larger one costs one more read or write call, not a copy.
const (
	linkReadBuffer  = 1 << 10
	linkWriteBuffer = 2 << 10
)

// smallBuffers gives the WebSocket library a hijacked connection with the
// link's own buffer sizes, keeping any bytes the HTTP server read ahead,
// and read through guard when it is set.
type smallBuffers struct {
	http.ResponseWriter
	guard func(net.Conn) net.Conn
	batch *batchConn // when set, the library writes through it
}

func (w smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Writer.Flush(); err != nil { // empty after the 101, but never drop bytes
		nc.Close()
		return nil, nil, err
	}
	if n := brw.Reader.Buffered(); n > 0 {
		// The library re-points the reader at the connection it is given,
		// so the bytes read ahead must come from that connection.
		ahead, _ := brw.Reader.Peek(n)
		nc = &aheadConn{Conn: nc, ahead: bytes.NewReader(bytes.Clone(ahead))}
	}
	if w.guard != nil {
		nc = w.guard(nc)
	}
	if w.batch != nil {
		w.batch.Conn = nc
		nc = w.batch
	}
	return nc, bufio.NewReadWriter(bufio.NewReaderSize(nc, linkReadBuffer), bufio.NewWriterSize(nc, linkWriteBuffer)), nil
}

// batchConn gathers what the WebSocket library writes between hold and
// release into one write call. The library writes each message and flushes
// it, and a message longer than the write buffer takes two or three write
// calls (the buffer, the rest, the tail); a link's flush of several frames
// is one call each. At thousands of links a write call is most of a
// delivery's cost (decision 037), and one per flush is the floor.
type batchConn struct {
	net.Conn
	mu   sync.Mutex
	held *[]byte // nil: writes go straight through
}

// batchBufs lends the held bytes for one flush, so an idle link keeps none.
var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// maxKeptBatch: a buffer that grew past this for a large flush is let go.
const maxKeptBatch = 256 << 10

func (c *batchConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held != nil {
		*c.held = append(*c.held, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// hold starts gathering writes.
func (c *batchConn) hold() {
	c.mu.Lock()
	c.held = batchBufs.Get().(*[]byte)
	c.mu.Unlock()
}

// release writes what was gathered, in one call, and stops gathering.
func (c *batchConn) release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.held
	c.held = nil
	if b == nil {
		return nil
	}
	var err error
	if len(*b) > 0 {
		_, err = c.Conn.Write(*b)
	}
	if cap(*b) <= maxKeptBatch {
		*b = (*b)[:0]
		batchBufs.Put(b)
	}
	return err
}

// aheadConn is a connection whose first bytes were already read off it.
type aheadConn struct {
	net.Conn
	ahead *bytes.Reader
}

func (c *aheadConn) Read(p []byte) (int, error) {
	if c.ahead.Len() > 0 {
		return c.ahead.Read(p)
	}
	return c.Conn.Read(p)
}
