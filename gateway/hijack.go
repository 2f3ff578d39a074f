package gateway

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
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
	return nc, bufio.NewReadWriter(bufio.NewReaderSize(nc, linkReadBuffer), bufio.NewWriterSize(nc, linkWriteBuffer)), nil
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
