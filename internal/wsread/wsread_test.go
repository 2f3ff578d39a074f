package wsread

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// pair is a server and a client end of one WebSocket on 127.0.0.1.
func pair(t testing.TB) (server, client *websocket.Conn) {
	t.Helper()
	return pairVia(t, nil)
}

// pairVia is pair with the client's HTTP client (nil: the default).
func pairVia(t testing.TB, hc *http.Client) (server, client *websocket.Conn) {
	t.Helper()
	accepted := make(chan *websocket.Conn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		accepted <- c
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case server = <-accepted:
	case <-ctx.Done():
		t.Fatal("no connection accepted")
	}
	t.Cleanup(func() {
		client.CloseNow()
		server.CloseNow()
	})
	return server, client
}

func TestReadGivesEachMessageExactly(t *testing.T) {
	server, client := pair(t)
	server.SetReadLimit(4 << 20)
	ctx := context.Background()
	sizes := []int{0, 1, 60, 511, 512, 513, scratchBytes - 1, scratchBytes, scratchBytes + 1, 70 << 10, 1<<20 + 3, 3}
	go func() {
		for i, n := range sizes {
			typ := websocket.MessageBinary
			if i%2 == 1 {
				typ = websocket.MessageText
			}
			if err := client.Write(ctx, typ, bytes.Repeat([]byte{byte('a' + i)}, n)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var got [][]byte
	for i, n := range sizes {
		typ, b, err := Read(ctx, server)
		if err != nil {
			t.Fatalf("message %d (%d bytes): %v", i, n, err)
		}
		want := websocket.MessageBinary
		if i%2 == 1 {
			want = websocket.MessageText
		}
		if typ != want {
			t.Errorf("message %d: type %v, want %v", i, typ, want)
		}
		// Exactly its length, in the smallest size class that holds it
		// (a little over its length), never a 512-byte start.
		if len(b) != n || cap(b) > n+n/4+8 {
			t.Errorf("message %d: len %d cap %d, want %d", i, len(b), cap(b), n)
		}
		if b == nil {
			t.Errorf("message %d: nil slice", i)
		}
		got = append(got, b)
	}
	// Nothing read later overwrote an earlier message: none aliases the
	// scratch buffer.
	for i, b := range got {
		if !bytes.Equal(b, bytes.Repeat([]byte{byte('a' + i)}, sizes[i])) {
			t.Errorf("message %d changed after later reads", i)
		}
	}
}

// Past the read limit the error is the library's own, as with Conn.Read.
func TestReadKeepsTheReadLimit(t *testing.T) {
	server, client := pair(t)
	server.SetReadLimit(1024)
	ctx := context.Background()
	go client.Write(ctx, websocket.MessageBinary, make([]byte, 4096))
	_, _, err := Read(ctx, server)
	if !errors.Is(err, websocket.ErrMessageTooBig) {
		t.Fatalf("error %v, want ErrMessageTooBig", err)
	}
}

// The allocation per small message, against Conn.Read's io.ReadAll:
//
//	go test -run '^$' -bench . -benchmem ./internal/wsread/
func BenchmarkRead(b *testing.B) {
	for _, size := range []int{60, 3000, 64 << 10, 1 << 20} {
		for _, how := range []struct {
			name string
			read func(context.Context, *websocket.Conn) (websocket.MessageType, []byte, error)
		}{
			{"wsread", Read},
			{"conn.Read", func(ctx context.Context, c *websocket.Conn) (websocket.MessageType, []byte, error) {
				return c.Read(ctx)
			}},
		} {
			b.Run(how.name+"/"+strconv.Itoa(size), func(b *testing.B) {
				server, client := pair(b)
				server.SetReadLimit(4 << 20)
				ctx := context.Background()
				msg := make([]byte, size)
				done := make(chan struct{})
				go func() {
					defer close(done)
					for range b.N {
						if err := client.Write(ctx, websocket.MessageBinary, msg); err != nil {
							return
						}
					}
				}()
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for range b.N {
					if _, _, err := how.read(ctx, server); err != nil {
						b.Fatal(err)
					}
				}
				<-done
			})
		}
	}
}

// A connection cut inside a message is an error, never a shorter message:
// the frame says 100 bytes, 10 come, then the socket closes.
func TestReadCutMessageIsAnError(t *testing.T) {
	for _, size := range []int{100, scratchBytes + 100} {
		var raw net.Conn
		server, _ := pairVia(t, &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			raw = c
			return c, err
		}}})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		server.SetReadLimit(1 << 20)
		// A masked binary frame of size bytes (16-bit length), then 10 of them.
		hdr := []byte{0x82, 0x80 | 126, byte(size >> 8), byte(size), 1, 2, 3, 4}
		if _, err := raw.Write(append(hdr, make([]byte, 10)...)); err != nil {
			t.Fatal(err)
		}
		raw.Close()
		if _, b, err := Read(ctx, server); err == nil {
			t.Fatalf("%d-byte frame cut after 10: read %d bytes and no error", size, len(b))
		}
	}
}

// Visit hands f each message whole, small ones in the scratch buffer and
// larger ones read in chunks, and calls f for none when the read fails.
func TestVisitHandsOverEachMessage(t *testing.T) {
	server, client := pair(t)
	server.SetReadLimit(1 << 20)
	ctx := context.Background()
	sizes := []int{0, 60, scratchBytes, scratchBytes + 1, 70 << 10, 5}
	go func() {
		for i, n := range sizes {
			if err := client.Write(ctx, websocket.MessageBinary, bytes.Repeat([]byte{byte('a' + i)}, n)); err != nil {
				t.Error(err)
				return
			}
		}
		client.Close(websocket.StatusNormalClosure, "")
	}()
	for i, n := range sizes {
		calls := 0
		err := Visit(ctx, server, func(typ websocket.MessageType, b []byte) {
			calls++
			if typ != websocket.MessageBinary || !bytes.Equal(b, bytes.Repeat([]byte{byte('a' + i)}, n)) {
				t.Errorf("message %d: type %v, %d bytes, want %d of %q", i, typ, len(b), n, rune('a'+i))
			}
		})
		if err != nil || calls != 1 {
			t.Fatalf("message %d: err %v, f called %d times", i, err, calls)
		}
	}
	err := Visit(ctx, server, func(websocket.MessageType, []byte) { t.Error("f called after the close") })
	if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("after the close: %v, want the normal closure", err)
	}
}
