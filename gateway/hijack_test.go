package gateway

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The hijacked connection has the link's buffer sizes and still yields the
// bytes a client sent right behind its request, even after the reader is
// re-pointed at the connection as coder/websocket does.
func TestSmallBuffersKeepReadAhead(t *testing.T) {
	got := make(chan string, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nc, brw, err := smallBuffers{ResponseWriter: w}.Hijack()
		if err != nil {
			got <- "hijack: " + err.Error()
			return
		}
		defer nc.Close()
		if brw.Reader.Size() != linkReadBuffer || brw.Writer.Size() != linkWriteBuffer {
			got <- "wrong buffer sizes"
			return
		}
		brw.Reader.Reset(nc)
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		b := make([]byte, 5)
		if _, err := io.ReadFull(brw.Reader, b); err != nil {
			got <- "read: " + err.Error()
			return
		}
		got <- string(b)
	}))
	defer ts.Close()
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// One write: the request and the first bytes of what follows it.
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\nahead"); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "ahead" {
		t.Fatalf("the server read %q, want the bytes sent behind the request", s)
	}
}
