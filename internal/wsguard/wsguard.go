package wsguard

import (
	"net"
	"unicode/utf8"

	"github.com/coder/websocket"
)

// Violation is a client frame the connection must fail for, and the close
// code RFC 6455 names for it.
type Violation struct {
	Code   websocket.StatusCode
	Reason string
}

func (v *Violation) Error() string { return "wsguard: " + v.Reason }

var (
	errUnmasked = &Violation{Code: websocket.StatusProtocolError, Reason: "a client frame is not masked"}
	errLength   = &Violation{Code: websocket.StatusProtocolError, Reason: "a frame length has its top bit set"}
	errReason   = &Violation{Code: websocket.StatusInvalidFramePayloadData, Reason: "a close frame's reason is not UTF-8"}
)

// Conn returns nc with its reads checked frame by frame. Only one
// goroutine may read it at a time, as coder/websocket does.
func Conn(nc net.Conn) net.Conn { return &conn{Conn: nc} }

type conn struct {
	net.Conn
	err error // the violation, once found: every later read returns it
	p   parser
}

func (c *conn) Read(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.Conn.Read(b)
	if k, v := c.p.scan(b[:n]); v != nil {
		c.err = v
		if k == 0 {
			return 0, v
		}
		return k, nil
	}
	return n, err
}

type stage uint8

const (
	first   stage = iota // FIN, RSV and opcode
	second               // MASK and the 7-bit length
	extLen               // the 16- or 64-bit length
	maskKey              // the 4-byte masking key
	payload              // the payload
)

const (
	opClose           = 0x8
	maxControlPayload = 125
)

// parser follows the frame boundaries of a client's byte stream.
type parser struct {
	stage  stage
	opcode byte
	ext    int    // extended length bytes still to come
	length uint64 // the frame's payload length
	keyN   int
	key    [4]byte
	left   uint64 // payload bytes still to come
	// A close frame's payload is gathered, unmasked, to check its reason.
	closing bool
	got     int
	buf     [maxControlPayload]byte
}

// scan follows b and reports the offset of the byte that reveals a
// violation (the bytes before it may pass) and the violation, or len(b)
// and nil.
func (p *parser) scan(b []byte) (int, *Violation) {
	for i := 0; i < len(b); {
		switch p.stage {
		case first:
			p.opcode = b[i] & 0x0f
			p.stage = second
			i++
		case second:
			if b[i]&0x80 == 0 {
				return i, errUnmasked
			}
			p.length, p.ext, p.keyN = 0, 0, 0
			switch n := b[i] & 0x7f; n {
			case 126:
				p.ext, p.stage = 2, extLen
			case 127:
				p.ext, p.stage = 8, extLen
			default:
				p.length, p.stage = uint64(n), maskKey
			}
			i++
		case extLen:
			if p.ext == 8 && b[i]&0x80 != 0 {
				return i, errLength
			}
			p.length = p.length<<8 | uint64(b[i])
			p.ext--
			if p.ext == 0 {
				p.stage = maskKey
			}
			i++
		case maskKey:
			p.key[p.keyN] = b[i]
			p.keyN++
			i++
			if p.keyN == 4 {
				p.startPayload()
			}
		case payload:
			if !p.closing {
				n := min(uint64(len(b)-i), p.left)
				i += int(n)
				p.left -= n
				if p.left == 0 {
					p.stage = first
				}
				continue
			}
			p.buf[p.got] = b[i] ^ p.key[p.got%4]
			p.got++
			if uint64(p.got) == p.length {
				if p.got > 2 && !utf8.Valid(p.buf[2:p.got]) {
					return i, errReason
				}
				p.stage = first
			}
			i++
		}
	}
	return len(b), nil
}

func (p *parser) startPayload() {
	p.stage = payload
	p.closing = p.opcode == opClose && p.length <= maxControlPayload
	p.got, p.left = 0, p.length
	if p.length == 0 {
		p.stage = first
	}
}
