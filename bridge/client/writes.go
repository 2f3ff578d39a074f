package client

import (
	"context"
	"errors"
	"fmt"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol/commit"
)

// WriteStatus is how a write ended.
type WriteStatus uint8

const (
	// WriteApplied: applied and durable at Cursor.
	WriteApplied WriteStatus = iota + 1
	// WriteUnchanged: a state the document already had; no commit.
	WriteUnchanged
	// WriteCursorMismatch: the expected cursor did not match; Cursor is
	// the document's.
	WriteCursorMismatch
	// WriteRefused: refused; Reasons say why.
	WriteRefused
	// WriteNoDocument: no such document and no root to create it with.
	WriteNoDocument
)

func (s WriteStatus) String() string {
	switch s {
	case WriteApplied:
		return "applied"
	case WriteUnchanged:
		return "unchanged"
	case WriteCursorMismatch:
		return "cursor-mismatch"
	case WriteRefused:
		return "refused"
	case WriteNoDocument:
		return "no-document"
	}
	return fmt.Sprintf("write-status(%d)", uint8(s))
}

// WriteResult is a write's outcome. A refusal or a failed compare-and-swap
// is a result, not an error.
type WriteResult struct {
	Status WriteStatus
	// Cursor is the commit's cursor when applied, else the document's.
	Cursor  uint64
	Reasons []Reason
	// Applied is the commit as applied (for a state, the reconciled
	// difference); set only for WriteApplied.
	Applied *CommitView
}

// WriteOptions qualify a write. The zero value applies at whatever cursor
// the document reached and does not create it.
type WriteOptions struct {
	// ExpectedCursor, when set, makes the write compare-and-swap: it lands
	// only if the document is still at this cursor (0: no commit yet).
	ExpectedCursor *uint64
	// CreateRoot creates a missing document with this root (commit writes;
	// a state write creates it with its state's root).
	CreateRoot *Root
	// Label is carried to subscribers in the commit's origin; at most
	// MaxLabelBytes.
	Label string
	// Writer names the writer of a unary write; Options.Backend when empty.
	// A stream write is named by the stream.
	Writer string
}

// Expect is a pointer to c, for WriteOptions.ExpectedCursor.
func Expect(c uint64) *uint64 { return &c }

func (o WriteOptions) check(backend string) (string, error) {
	if len(o.Label) > MaxLabelBytes {
		return "", fmt.Errorf("client: a label of %d bytes is over the %d-byte bound", len(o.Label), MaxLabelBytes)
	}
	w := o.Writer
	if w == "" {
		w = backend
	}
	if len(w) > MaxLabelBytes {
		return "", fmt.Errorf("client: a writer name of %d bytes is over the %d-byte bound", len(w), MaxLabelBytes)
	}
	return w, nil
}

func (c *Client) resultFrom(r *v1.WriteResult) (WriteResult, error) {
	out := WriteResult{Cursor: r.GetCursor(), Reasons: reasonsFrom(r.GetReasons())}
	switch r.GetStatus() {
	case v1.WriteStatus_WRITE_STATUS_APPLIED:
		out.Status = WriteApplied
		if r.GetCommit() != nil {
			v, err := viewFrom(r.GetCommit(), c.limits)
			if err != nil {
				return out, fmt.Errorf("client: the applied commit is unreadable: %w", err)
			}
			out.Applied = &v
		}
	case v1.WriteStatus_WRITE_STATUS_UNCHANGED:
		out.Status = WriteUnchanged
	case v1.WriteStatus_WRITE_STATUS_CURSOR_MISMATCH:
		out.Status = WriteCursorMismatch
	case v1.WriteStatus_WRITE_STATUS_REFUSED:
		out.Status = WriteRefused
	case v1.WriteStatus_WRITE_STATUS_NO_DOCUMENT:
		out.Status = WriteNoDocument
	default:
		return out, fmt.Errorf("client: unknown write status %v", r.GetStatus())
	}
	return out, nil
}

func (c *Client) open() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	return nil
}

func optionalRoot(r *Root) *v1.Root {
	if r == nil {
		return nil
	}
	return rootTo(*r)
}

// WriteCommit applies a commit to a document with a unary call. It is
// judged by the document's accept authority, which may be this client's
// own claim: its handler must not wait on this write.
func (c *Client) WriteCommit(ctx context.Context, doc string, cm commit.Commit, o WriteOptions) (WriteResult, error) {
	if err := c.open(); err != nil {
		return WriteResult{}, err
	}
	writer, err := o.check(c.opts.Backend)
	if err != nil {
		return WriteResult{}, err
	}
	pc, err := commitTo(cm)
	if err != nil {
		return WriteResult{}, fmt.Errorf("client: the commit does not encode: %w", err)
	}
	resp, err := c.svc.WriteCommit(ctx, &v1.WriteCommitRequest{Document: doc, Commit: pc, ExpectedCursor: o.ExpectedCursor,
		CreateRoot: optionalRoot(o.CreateRoot), Writer: writer, Label: o.Label})
	if err != nil {
		return WriteResult{}, fmt.Errorf("client: WriteCommit %q: %w", doc, err)
	}
	return c.resultFrom(resp.GetResult())
}

// ReplaceState moves a document to a whole state with a unary call; the
// gateway reconciles the difference into one commit.
func (c *Client) ReplaceState(ctx context.Context, doc string, st State, o WriteOptions) (WriteResult, error) {
	if err := c.open(); err != nil {
		return WriteResult{}, err
	}
	writer, err := o.check(c.opts.Backend)
	if err != nil {
		return WriteResult{}, err
	}
	ps, err := stateTo(st)
	if err != nil {
		return WriteResult{}, fmt.Errorf("client: the state does not encode: %w", err)
	}
	resp, err := c.svc.ReplaceState(ctx, &v1.ReplaceStateRequest{Document: doc, State: ps, ExpectedCursor: o.ExpectedCursor,
		Writer: writer, Label: o.Label})
	if err != nil {
		return WriteResult{}, fmt.Errorf("client: ReplaceState %q: %w", doc, err)
	}
	return c.resultFrom(resp.GetResult())
}

// StreamWriteCommit applies a commit on the authority stream, opening it if
// needed and waiting for it while it reconnects. Unlike WriteCommit it is
// never asked of this client's own accept claims. If the stream ends after
// the write was sent, the error is ErrOutcomeUnknown.
func (c *Client) StreamWriteCommit(ctx context.Context, doc string, cm commit.Commit, o WriteOptions) (WriteResult, error) {
	if _, err := o.check(c.opts.Backend); err != nil {
		return WriteResult{}, err
	}
	pc, err := commitTo(cm)
	if err != nil {
		return WriteResult{}, fmt.Errorf("client: the commit does not encode: %w", err)
	}
	return c.auth.write(ctx, &v1.Write{Change: &v1.Write_Commit{Commit: &v1.CommitWrite{Document: doc, Commit: pc,
		ExpectedCursor: o.ExpectedCursor, CreateRoot: optionalRoot(o.CreateRoot), Label: o.Label}}})
}

// StreamReplaceState moves a document to a whole state on the authority
// stream (see StreamWriteCommit).
func (c *Client) StreamReplaceState(ctx context.Context, doc string, st State, o WriteOptions) (WriteResult, error) {
	if _, err := o.check(c.opts.Backend); err != nil {
		return WriteResult{}, err
	}
	ps, err := stateTo(st)
	if err != nil {
		return WriteResult{}, fmt.Errorf("client: the state does not encode: %w", err)
	}
	return c.auth.write(ctx, &v1.Write{Change: &v1.Write_State{State: &v1.StateWrite{Document: doc, State: ps,
		ExpectedCursor: o.ExpectedCursor, Label: o.Label}}})
}

type writeOutcome struct {
	result *v1.WriteResult
	err    error
}

// write sends w on a connected session and waits for its WriteAck. A write
// not yet handed to a session that ended is sent on the next one.
func (a *authority) write(ctx context.Context, w *v1.Write) (WriteResult, error) {
	if err := a.ensure(); err != nil {
		return WriteResult{}, err
	}
	for {
		s, err := a.waitSession(ctx)
		if err != nil {
			return WriteResult{}, err
		}
		ch := make(chan writeOutcome, 1)
		id, ok := s.addWrite(ch)
		if !ok {
			continue
		}
		w.WriteId = id
		if !s.enqueue(ctx, &v1.AuthorityRequest{Message: &v1.AuthorityRequest_Write{Write: w}}) {
			s.dropWrite(id)
			select { // the session is ending before the write left: try the next
			case <-s.done:
				continue
			case <-ctx.Done():
				return WriteResult{}, ctx.Err()
			}
		}
		select {
		case o := <-ch:
			if o.err != nil {
				return WriteResult{}, o.err
			}
			return a.c.resultFrom(o.result)
		case <-ctx.Done():
			s.dropWrite(id)
			return WriteResult{}, fmt.Errorf("%w: %w", ErrOutcomeUnknown, ctx.Err())
		}
	}
}

// addWrite registers a pending write under a fresh id; false once the
// session has ended.
func (s *session) addWrite(ch chan writeOutcome) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return 0, false
	}
	s.nextWrite++
	s.writes[s.nextWrite] = ch
	return s.nextWrite, true
}

func (s *session) dropWrite(id uint64) {
	s.mu.Lock()
	delete(s.writes, id)
	s.mu.Unlock()
}

func (s *session) writeAck(a *v1.WriteAck) {
	s.mu.Lock()
	ch := s.writes[a.GetWriteId()]
	delete(s.writes, a.GetWriteId())
	s.mu.Unlock()
	if ch == nil {
		return // not ours, or its caller gave up
	}
	if a.GetResult() == nil {
		ch <- writeOutcome{err: errors.New("client: a WriteAck with no result")}
		return
	}
	ch <- writeOutcome{result: a.GetResult()}
}
