package client

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/weftgate/weftgate/protocol/commit"
)

// Reason is one reason a commit, a peer or a request was refused: an aweft
// refused frame's [code, message, path].
type Reason struct {
	// Code is short, lowercase and hyphenated, and required.
	Code string
	// Message is for people; may be empty.
	Message string
	// Path is the slot the reason is about: nil when unknown, empty (not
	// nil) for the root.
	Path []string
}

// Refuse is a Reason with a code, a message and, when given, a path.
func Refuse(code, message string, path ...string) Reason {
	return Reason{Code: code, Message: message, Path: path}
}

func (r Reason) String() string {
	var b strings.Builder
	b.WriteString(r.Code)
	if r.Message != "" {
		b.WriteString(": " + r.Message)
	}
	if r.Path != nil {
		b.WriteString(" at /" + strings.Join(r.Path, "/"))
	}
	return b.String()
}

// Pattern selects names: document names, call names or handshake URL paths.
type Pattern struct {
	// Name is the exact name, or the prefix when Prefix is set.
	Name string
	// Prefix makes the pattern match every name starting with Name.
	Prefix bool
}

// Exact matches one name.
func Exact(name string) Pattern { return Pattern{Name: name} }

// Prefix matches every name starting with p; "" matches every name.
func Prefix(p string) Pattern { return Pattern{Name: p, Prefix: true} }

// Match says whether the pattern selects name.
func (p Pattern) Match(name string) bool {
	if p.Prefix {
		return strings.HasPrefix(name, p.Name)
	}
	return name == p.Name
}

func (p Pattern) String() string {
	if p.Prefix {
		return p.Name + "*"
	}
	return p.Name
}

// Root names a document's root observable.
type Root struct {
	ID   commit.ID
	Kind commit.Kind
}

// State is a document's whole state: its root and one commit of add deltas
// (no deltas for an empty document).
type State struct {
	Root   Root
	Commit commit.Commit
}

// Identity is who a peer is, fixed for its connection's life.
type Identity struct {
	// ID is the peer's stable id; empty when anonymous.
	ID        string
	Anonymous bool
	// Roles are in the identifier's order.
	Roles  []string
	Claims map[string]string
}

// HasRole says whether the identity was granted role.
func (i Identity) HasRole(role string) bool { return slices.Contains(i.Roles, role) }

// Peer is one browser connection.
type Peer struct {
	Identity     Identity
	RemoteAddr   string
	ConnectionID uint64
}

// BackendOrigin names a backend that wrote a commit.
type BackendOrigin struct {
	Name     string
	StreamID uint64
	WriteID  uint64
	Label    string
}

// Origin says who made a commit: exactly one of Peer and Backend is set.
type Origin struct {
	Peer    *Peer
	Backend *BackendOrigin
}

// CommitView is a commit as the gateway sent it: decoded from its exact
// bytes, with each delta's path from the typed view.
type CommitView struct {
	// Commit is commit.Decode of Encoded.
	Commit commit.Commit
	// Encoded is the exact canonical bytes.
	Encoded []byte
	// Paths[i] is the path of Commit.Deltas[i]'s slot from the root: nil
	// when no attach path reaches it. Empty for a snapshot's state commit.
	Paths [][]string
}

// Under returns the indexes of the deltas whose path starts with prefix
// (the slot named by prefix itself included). Deltas with no path are not
// under anything.
func (v CommitView) Under(prefix ...string) []int {
	var out []int
	for i, p := range v.Paths {
		if p != nil && len(p) >= len(prefix) && slices.Equal(p[:len(prefix)], prefix) {
			out = append(out, i)
		}
	}
	return out
}

// Asked is what every question carries.
type Asked struct {
	// QuestionID is unique on one stream; answers go back by it.
	QuestionID uint64
	// ClaimID is the claim the question was asked under.
	ClaimID uint64
	// Attempt is 1 the first time the question is asked, one more for each
	// claimant that did not answer in time.
	Attempt uint32
	// Timeout is how long the gateway waits for the answer.
	Timeout time.Duration
}

// AcceptQuestion asks whether a commit may land in a document.
type AcceptQuestion struct {
	Asked
	Document string
	// Cursor is the document's cursor when the question was asked.
	Cursor uint64
	Origin Origin
	// State marks the commit that moves the document to a state: a peer's
	// state for a document it creates, or a backend's replace. Refusing it
	// refuses the creation or the replace.
	State bool
	CommitView
}

// LoadQuestion asks for a document the gateway does not hold.
type LoadQuestion struct {
	Asked
	Document string
	// Peer is the peer whose open asked for it; nil when an API call or a
	// subscriber did (opens that joined the load are not named).
	Peer *Peer
}

// Loaded is a Load handler's answer for a document that exists.
type Loaded struct {
	State State
	// Cursor is the cursor the state is at; the gateway numbers the next
	// commit Cursor+1.
	Cursor uint64
}

// Handshake is the HTTP request a peer opened its WebSocket with.
type Handshake struct {
	RemoteAddr string
	Host       string
	Path       string
	RawQuery   string
	// Header holds the request headers with canonical keys, so Get and
	// (&http.Request{Header: h}).Cookie work.
	Header http.Header
	// ConnectionID is the Peer.ConnectionID the peer will have if
	// admitted.
	ConnectionID uint64
}

// IdentifyQuestion asks who a peer is, at its handshake.
type IdentifyQuestion struct {
	Asked
	Handshake Handshake
}

// MayOpenQuestion asks whether a peer may open a document.
type MayOpenQuestion struct {
	Asked
	Document string
	Peer     Peer
	// Exists says whether the document exists; when it does not, allowing
	// the open lets the gateway create it from the peer's root.
	Exists bool
	// Root is the root the peer states; nil when it holds nothing.
	Root *Root
	// Want says whether the peer asked for the gateway's state.
	Want bool
}

// CallQuestion is a request-channel call from a peer.
type CallQuestion struct {
	Asked
	Name string
	// Args is the call's args as the peer sent them; "null" for none.
	Args      []byte
	Peer      Peer
	RequestID int64
}
