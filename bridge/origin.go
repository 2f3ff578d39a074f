package bridge

import (
	"strconv"
	"strings"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/store"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// A commit's origin is stored with it as one string (store.Record.Origin),
// so a subscriber learns who made each commit after a restart too. A link
// is the gateway's "c<connection>"; a backend write is
//
//	b<stream>.<write>.<len(name)>:<name><label>
//
// The write number is unique among the bridge's unfinished writes (unary
// writes number themselves with stream 0), which is how a verdict the
// bridge gave is found again when gateway.Write returns.

// backendOrigin is a backend write's origin.
type backendOrigin struct {
	name   string
	stream uint64
	write  uint64
	label  string
}

func (o backendOrigin) id() string {
	var b strings.Builder
	b.WriteByte('b')
	b.WriteString(strconv.FormatUint(o.stream, 10))
	b.WriteByte('.')
	b.WriteString(strconv.FormatUint(o.write, 10))
	b.WriteByte('.')
	b.WriteString(strconv.Itoa(len(o.name)))
	b.WriteByte(':')
	b.WriteString(o.name)
	b.WriteString(o.label)
	return b.String()
}

// fits reports whether the origin can be stored.
func (o backendOrigin) fits() bool { return len(o.id()) <= store.MaxOriginBytes }

func (o backendOrigin) gateway() gateway.Origin {
	return gateway.Origin{Kind: "backend", ID: o.id()}
}

func parseBackendOrigin(s string) (backendOrigin, bool) {
	if !strings.HasPrefix(s, "b") {
		return backendOrigin{}, false
	}
	head, rest, ok := strings.Cut(s[1:], ":")
	if !ok {
		return backendOrigin{}, false
	}
	parts := strings.Split(head, ".")
	if len(parts) != 3 {
		return backendOrigin{}, false
	}
	st, err1 := strconv.ParseUint(parts[0], 10, 64)
	wr, err2 := strconv.ParseUint(parts[1], 10, 64)
	n, err3 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || n < 0 || n > len(rest) {
		return backendOrigin{}, false
	}
	return backendOrigin{name: rest[:n], stream: st, write: wr, label: rest[n:]}, true
}

// connectionID reads the gateway's "c<n>" link id.
func connectionID(s string) (uint64, bool) {
	if !strings.HasPrefix(s, "c") {
		return 0, false
	}
	n, err := strconv.ParseUint(s[1:], 10, 64)
	return n, err == nil
}

// originToProto turns a stored or in-flight origin into the API's. A link's
// identity is known only while its commit is in flight (Judge); stored
// records name the connection alone.
func originToProto(kind, id string, o gateway.Origin) *v1.Origin {
	if n, ok := connectionID(id); ok && kind != "backend" {
		// Every judged commit from a peer makes one: its four messages are
		// one allocation.
		m := new(peerOriginMessages)
		m.peer.ConnectionId = n
		if kind == "link" {
			setIdentity(&m.identity, o.Identity)
			m.peer.Identity = &m.identity
			m.peer.RemoteAddr = o.RemoteAddr
		}
		m.source.Peer = &m.peer
		m.origin.Source = &m.source
		return &m.origin
	}
	if b, ok := parseBackendOrigin(id); ok {
		bo := &v1.BackendOrigin{Name: b.name, StreamId: b.stream, Label: b.label}
		if b.stream != 0 {
			bo.WriteId = b.write
		}
		return &v1.Origin{Source: &v1.Origin_Backend{Backend: bo}}
	}
	return &v1.Origin{Source: &v1.Origin_Backend{Backend: &v1.BackendOrigin{Name: id}}}
}

type peerOriginMessages struct {
	origin   v1.Origin
	source   v1.Origin_Peer
	peer     v1.Peer
	identity v1.Identity
}

func storedOriginToProto(id string) *v1.Origin { return originToProto("", id, gateway.Origin{}) }
