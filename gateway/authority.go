package gateway

import (
	"context"

	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/gateway/docsm"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Origin says who made a commit: a link (a browser), or a backend.
type Origin struct {
	// Kind is "link", "backend" or "gateway".
	Kind string
	// ID names the origin: the connection id for a link, the backend's name.
	ID string
	// Identity is the peer's identity for a link.
	Identity admission.Identity
	// RemoteAddr is a link's peer address, as admission saw it.
	RemoteAddr string
}

// AcceptRequest is one question to the authority: may this commit land?
type AcceptRequest struct {
	Document string
	// Cursor is the document's cursor when the question was asked.
	Cursor uint64
	Origin Origin
	Commit commit.Commit
	// Bytes are the commit's exact aweft bytes.
	Bytes []byte
	// Paths holds, for each delta, its attach path from the root (nil when
	// the target is not reachable before the commit).
	Paths [][]string
	// State marks the commit that moves a document to a state: a creating
	// peer's state, or a backend's replace. Refusing it refuses the state.
	State bool
}

// Verdict answers an AcceptRequest. No reasons means accepted.
type Verdict = docsm.Verdict

// Refuse is a verdict refusing with one reason.
func Refuse(code protocol.Reason, msg string) Verdict {
	return Verdict{Reasons: []frame.Reason{{Code: string(code), Message: msg}}}
}

// OpenRequest asks whether a peer may open a document, and whether the
// gateway may create it from the peer's root when it holds nothing.
type OpenRequest struct {
	Document string
	Identity admission.Identity
	Exists   bool
	// Root is the root the peer states in its open (nil when it holds
	// nothing) and Want whether it asked for the gateway's state.
	Root *frame.Root
	Want bool
	// Link is the connection's id ("c7") and RemoteAddr the peer's
	// address as admission saw it.
	Link       string
	RemoteAddr string
}

// Authority decides what lands. Judge is called on the document's hub
// goroutine and must not block: it answers by calling reply exactly once,
// at once or later from any goroutine. The gateway keeps several questions
// in flight per document and still applies in order. MayOpen is called on
// the hub goroutine too and answers the same way; a nil error lets the peer
// open (and create) the document.
type Authority interface {
	Judge(req *AcceptRequest, reply func(Verdict))
	MayOpen(req OpenRequest, reply func(error))
}

// Loader produces a document the gateway does not hold (a backend's load).
// It returns ok=false when nobody holds it.
type Loader interface {
	Load(ctx context.Context, req LoadRequest) (doc Loaded, ok bool, err error)
}

// LoadRequest names the document a Loader is asked for.
type LoadRequest struct {
	Document string
	// Opener is the link whose open needs the document (Kind "link"); nil
	// when an API call or a subscriber does. Opens that come while the
	// load is under way wait for the same answer and are not named.
	Opener *Origin
}

// Loaded is a document a Loader produced.
type Loaded struct {
	Root  frame.Root
	State []byte // a snapshot commit; nil for an empty document
	// Cursor is the cursor State is at; the gateway numbers the next
	// commit Cursor+1, so cursors continue from wherever the document was.
	Cursor uint64
}

// Policy is the local authority: it accepts every commit unless ReadOnly is
// set, and lets anyone open and create documents.
type Policy struct {
	// ReadOnly refuses every write with the reason read-only.
	ReadOnly bool
}

// ReasonReadOnly is the refusal a read-only gateway gives every write.
const ReasonReadOnly protocol.Reason = "read-only"

var acceptAll = Verdict{}

func (p Policy) Judge(req *AcceptRequest, reply func(Verdict)) {
	if p.ReadOnly {
		reply(Refuse(ReasonReadOnly, "this gateway accepts no writes"))
		return
	}
	reply(acceptAll)
}

func (p Policy) MayOpen(_ OpenRequest, reply func(error)) { reply(nil) }

// ReasonAuthorityTimeout refuses a commit whose verdict did not come in time.
const ReasonAuthorityTimeout = protocol.AuthorityTimeout
