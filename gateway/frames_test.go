package gateway_test

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftgate/weftgate/gateway"
)

// upgradeRaw opens a WebSocket to ts over a raw TCP connection and returns
// it with a reader positioned after the 101.
func upgradeRaw(t *testing.T, ts *testServer) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", strings.TrimPrefix(ts.http.URL, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	req := "GET / HTTP/1.1\r\nHost: " + ts.http.Listener.Addr().String() + "\r\n" +
		"Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
	if _, err := io.WriteString(nc, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %s", res.Status)
	}
	return nc, br
}

// clientFrame is a frame as a client sends it: masked with key (nil: not
// masked), the length in the shortest form unless long is set.
func clientFrame(opcode byte, payload []byte, key []byte, long bool) []byte {
	b := []byte{0x80 | opcode}
	mask := byte(0)
	if key != nil {
		mask = 0x80
	}
	switch n := len(payload); {
	case long:
		b = append(b, mask|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	case n < 126:
		b = append(b, mask|byte(n))
	case n <= 0xffff:
		b = append(b, mask|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, mask|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	b = append(b, key...)
	for i, c := range payload {
		if key != nil {
			c ^= key[i%4]
		}
		b = append(b, c)
	}
	return b
}

var maskKey = []byte{0x12, 0x34, 0x56, 0x78}

// closeCode reads the server's frames until its close frame and returns
// that frame's code (-1 when the socket ended without one).
func closeCode(t *testing.T, br *bufio.Reader) int {
	t.Helper()
	for {
		var h [2]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			return -1
		}
		n := int(h[1] & 0x7f)
		switch n {
		case 126:
			var l [2]byte
			if _, err := io.ReadFull(br, l[:]); err != nil {
				t.Fatal(err)
			}
			n = int(binary.BigEndian.Uint16(l[:]))
		case 127:
			var l [8]byte
			if _, err := io.ReadFull(br, l[:]); err != nil {
				t.Fatal(err)
			}
			n = int(binary.BigEndian.Uint64(l[:]))
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(br, p); err != nil {
			t.Fatal(err)
		}
		if h[0]&0x0f == 0x8 {
			if n < 2 {
				return 1005
			}
			return int(binary.BigEndian.Uint16(p))
		}
	}
}

// RFC 6455: an unmasked client frame and a 64-bit length with its top bit
// set are protocol errors (1002); a close reason that is not UTF-8 is 1007
// (issue 19 item 7). Each is written by hand, whole and one byte per write.
func TestBadFramesCloseWithTheirCodes(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	topBit := clientFrame(0x2, nil, maskKey, true)
	topBit[2] |= 0x80
	cases := []struct {
		name  string
		bytes []byte
		code  int
	}{
		{"unmasked binary", clientFrame(0x2, []byte{1, 2, 3}, nil, false), 1002},
		{"unmasked close", clientFrame(0x8, []byte{0x03, 0xe8}, nil, false), 1002},
		{"length with its top bit set", topBit, 1002},
		{"close reason not UTF-8", clientFrame(0x8, []byte{0x03, 0xe8, 'o', 0xff, 0xfe}, maskKey, false), 1007},
		{"close reason cut inside a rune", clientFrame(0x8, []byte{0x03, 0xe8, 0xe2, 0x82}, maskKey, false), 1007},
		// What the guard lets through keeps the library's answers.
		{"close reason in UTF-8", clientFrame(0x8, []byte{0x03, 0xe8, 0xe2, 0x82, 0xac}, maskKey, false), 1000},
		{"close 4000 with no reason", clientFrame(0x8, []byte{0x0f, 0xa0}, maskKey, false), 4000},
	}
	for _, c := range cases {
		for _, split := range []bool{false, true} {
			name := c.name
			if split {
				name += ", a byte at a time"
			}
			t.Run(name, func(t *testing.T) {
				nc, br := upgradeRaw(t, ts)
				// A valid ping first: frames before the bad one are still
				// served.
				if _, err := nc.Write(clientFrame(0x9, []byte("hi"), maskKey, false)); err != nil {
					t.Fatal(err)
				}
				if !split {
					if _, err := nc.Write(c.bytes); err != nil {
						t.Fatal(err)
					}
				} else {
					for _, b := range c.bytes {
						if _, err := nc.Write([]byte{b}); err != nil {
							// The gateway may close as soon as it has the
							// byte that decides; the close is checked below.
							break
						}
					}
				}
				var h [4]byte
				if _, err := io.ReadFull(br, h[:]); err != nil || h != [4]byte{0x8a, 2, 'h', 'i'} {
					t.Fatalf("the ping before the bad frame was not answered: % x %v", h, err)
				}
				if got := closeCode(t, br); got != c.code {
					t.Fatalf("closed with %d, want %d", got, c.code)
				}
			})
		}
	}
}
