package client

import (
	"bytes"
	"fmt"
	"net/http"
	"net/textproto"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/internal/pbconv"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

// Conversions between the generated API and the SDK's types. Reading is
// strict (a malformed message is an error, never a guess); every error is a
// *protocol.Error with the reason the proto comments name.

func rootFrom(p *v1.Root) (Root, error) {
	if p == nil {
		return Root{}, protocol.Errorf(protocol.InvalidCommit, "a root is required")
	}
	id, err := pbconv.IDFrom(p.GetId())
	if err != nil {
		return Root{}, err
	}
	k, err := pbconv.KindFrom(p.GetKind())
	return Root{ID: id, Kind: k}, err
}

func rootTo(r Root) *v1.Root { return &v1.Root{Id: pbconv.IDTo(r.ID), Kind: pbconv.KindTo(r.Kind)} }

// commitFrom reads a commit from its bytes when it has them, else from its
// typed deltas (encoding them canonically), within l.
func commitFrom(p *v1.Commit, l commit.Limits) (commit.Commit, []byte, error) {
	if len(p.GetEncoded()) > 0 {
		c, err := commit.DecodeWithLimits(p.GetEncoded(), l)
		return c, p.GetEncoded(), err
	}
	c := commit.Commit{Deltas: make([]commit.Delta, len(p.GetDeltas()))}
	for i, pd := range p.GetDeltas() {
		d, err := pbconv.DeltaFrom(pd)
		if err != nil {
			return commit.Commit{}, nil, err
		}
		c.Deltas[i] = d
	}
	if len(p.GetTag()) > 0 {
		c.Tag = p.GetTag()
	}
	b, err := commit.Encode(c)
	if err != nil {
		return commit.Commit{}, nil, err
	}
	c, err = commit.DecodeWithLimits(b, l) // canonical order, as from the wire
	return c, b, err
}

// viewFrom reads a commit the gateway sent as its bytes and paths
// (COMMIT_VIEW_ENCODED, what the SDK claims with) or in both forms, and
// refuses one whose paths or typed view disagree with its bytes: the paths
// are what a handler judges by, so they must describe the commit the bytes
// are.
func viewFrom(p *v1.Commit, l commit.Limits) (CommitView, error) {
	c, b, err := commitFrom(p, l)
	if err != nil {
		return CommitView{}, err
	}
	v := CommitView{Commit: c, Encoded: b}
	pds := p.GetDeltas()
	if len(pds) == 0 {
		v.Paths = make([][]string, len(c.Deltas))
		ps := p.GetPaths()
		if len(ps) == 0 {
			return v, nil
		}
		if len(ps) != len(c.Deltas) {
			return CommitView{}, protocol.Errorf(protocol.InvalidCommit, fmt.Sprintf("%d paths for %d deltas", len(ps), len(c.Deltas)))
		}
		for i, pp := range ps {
			if steps := pp.GetSteps(); len(steps) > 0 {
				v.Paths[i] = steps
			}
		}
		return v, nil
	}
	if len(pds) != len(c.Deltas) {
		return CommitView{}, protocol.Errorf(protocol.InvalidCommit, fmt.Sprintf("the typed view has %d deltas, the bytes %d", len(pds), len(c.Deltas)))
	}
	if !bytes.Equal(p.GetTag(), c.Tag) {
		return CommitView{}, protocol.Errorf(protocol.InvalidCommit, "the typed view's tag differs from the bytes'")
	}
	v.Paths = make([][]string, len(pds))
	for i, pd := range pds {
		d, err := pbconv.DeltaFrom(pd)
		if err != nil {
			return CommitView{}, err
		}
		if d != c.Deltas[i] {
			return CommitView{}, protocol.Errorf(protocol.InvalidCommit, fmt.Sprintf("delta %d of the typed view differs from the bytes", i))
		}
		v.Paths[i] = pbconv.PathFrom(pd.GetPath())
	}
	return v, nil
}

// commitTo sends a commit as its canonical bytes.
func commitTo(c commit.Commit) (*v1.Commit, error) {
	b, err := commit.Encode(c)
	if err != nil {
		return nil, err
	}
	return &v1.Commit{Encoded: b}, nil
}

func stateFrom(p *v1.DocumentState, l commit.Limits) (State, []byte, error) {
	r, err := rootFrom(p.GetRoot())
	if err != nil {
		return State{}, nil, err
	}
	if p.GetCommit() == nil {
		return State{Root: r}, nil, nil
	}
	c, b, err := commitFrom(p.GetCommit(), l)
	return State{Root: r, Commit: c}, b, err
}

func stateTo(s State) (*v1.DocumentState, error) {
	out := &v1.DocumentState{Root: rootTo(s.Root)}
	if len(s.Commit.Deltas) == 0 {
		return out, nil
	}
	c, err := commitTo(s.Commit)
	out.Commit = c
	return out, err
}

func reasonsFrom(ps []*v1.Reason) []Reason {
	if len(ps) == 0 {
		return nil
	}
	out := make([]Reason, len(ps))
	for i, p := range ps {
		out[i] = Reason{Code: p.GetCode(), Message: p.GetMessage(), Path: pbconv.PathFrom(p.GetPath())}
	}
	return out
}

// reasonsTo refuses a reason with no code: the gateway requires one, and a
// handler that forgot it should fail loudly rather than refuse vaguely.
func reasonsTo(rs []Reason) ([]*v1.Reason, error) {
	out := make([]*v1.Reason, len(rs))
	for i, r := range rs {
		if r.Code == "" {
			return nil, fmt.Errorf("reason %d has no code", i)
		}
		out[i] = &v1.Reason{Code: r.Code, Message: r.Message, Path: pbconv.PathTo(r.Path)}
	}
	return out, nil
}

func identityFrom(p *v1.Identity) Identity {
	if p == nil {
		return Identity{Anonymous: true}
	}
	return Identity{ID: p.GetId(), Anonymous: p.GetAnonymous(), Roles: p.GetRoles(), Claims: p.GetClaims()}
}

func identityTo(i *Identity) *v1.Identity {
	if i == nil {
		return nil
	}
	return &v1.Identity{Id: i.ID, Anonymous: i.Anonymous, Roles: i.Roles, Claims: i.Claims}
}

func peerFrom(p *v1.Peer) Peer {
	return Peer{Identity: identityFrom(p.GetIdentity()), RemoteAddr: p.GetRemoteAddr(), ConnectionID: p.GetConnectionId()}
}

func optionalPeer(p *v1.Peer) *Peer {
	if p == nil {
		return nil
	}
	peer := peerFrom(p)
	return &peer
}

func originFrom(p *v1.Origin) Origin {
	switch s := p.GetSource().(type) {
	case *v1.Origin_Peer:
		return Origin{Peer: optionalPeer(s.Peer)}
	case *v1.Origin_Backend:
		b := s.Backend
		return Origin{Backend: &BackendOrigin{Name: b.GetName(), StreamID: b.GetStreamId(), WriteID: b.GetWriteId(), Label: b.GetLabel()}}
	}
	return Origin{}
}

func handshakeFrom(p *v1.Handshake) Handshake {
	h := Handshake{RemoteAddr: p.GetRemoteAddr(), Host: p.GetHost(), Path: p.GetPath(), RawQuery: p.GetRawQuery(),
		Header: make(http.Header, len(p.GetHeaders())), ConnectionID: p.GetConnectionId()}
	for _, hd := range p.GetHeaders() {
		k := textproto.CanonicalMIMEHeaderKey(hd.GetName())
		h.Header[k] = append(h.Header[k], hd.GetValues()...)
	}
	return h
}

func patternTo(p Pattern) *v1.Pattern {
	if p.Prefix {
		return &v1.Pattern{Match: &v1.Pattern_Prefix{Prefix: p.Name}}
	}
	return &v1.Pattern{Match: &v1.Pattern_Exact{Exact: p.Name}}
}
