package gateway

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
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

// countWrites counts the write calls that reach the socket.
type countWrites struct {
	net.Conn
	n *atomic.Int64
}

func (c countWrites) Write(p []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(p)
}

// A link's flush of several messages, some longer than the link's write
// buffer, reaches the socket in one write call, and the client reads each
// message whole and in order. Unheld, one such message takes more than one.
func TestFlushIsOneWriteCall(t *testing.T) {
	var calls atomic.Int64
	batch := &batchConn{}
	msgs := [][]byte{bytes.Repeat([]byte("a"), 3*linkWriteBuffer), []byte("b"), bytes.Repeat([]byte("c"), linkWriteBuffer+7)}
	type result struct{ held, unheld int64 }
	done := make(chan result, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		guard := func(nc net.Conn) net.Conn { return countWrites{nc, &calls} }
		ws, err := websocket.Accept(smallBuffers{ResponseWriter: w, guard: guard, batch: batch}, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := context.Background()
		before := calls.Load()
		batch.hold()
		for _, m := range msgs {
			if err := ws.Write(ctx, websocket.MessageBinary, m); err != nil {
				t.Error(err)
			}
		}
		if err := batch.release(); err != nil {
			t.Error(err)
		}
		held := calls.Load() - before
		before = calls.Load()
		if err := ws.Write(ctx, websocket.MessageBinary, msgs[0]); err != nil {
			t.Error(err)
		}
		done <- result{held, calls.Load() - before}
		ws.Read(ctx) // until the client closes
	}))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	for i, want := range append(msgs, msgs[0]) {
		_, got, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("message %d: %d bytes, want %d", i, len(got), len(want))
		}
	}
	r := <-done
	if r.held != 1 {
		t.Errorf("a held flush of %d messages took %d write calls, want 1", len(msgs), r.held)
	}
	if r.unheld < 2 {
		t.Errorf("an unheld message of %d bytes took %d write call; the test no longer shows what holding saves", len(msgs[0]), r.unheld)
	}
}
