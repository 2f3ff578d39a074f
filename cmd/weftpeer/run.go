package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// eventBuffer is how many events may wait while a line is written; past it
// -follow stops with fell-behind rather than print a stream with a gap.
const eventBuffer = 1 << 14

func peerMain(ctx context.Context, c config, out io.Writer) error {
	var write commit.Commit
	if c.Write != "" {
		var err error
		if write, err = parseWrite(c.Write); err != nil {
			return err
		}
	}
	opts := peer.Options{Header: c.Header, EventBuffer: eventBuffer}
	setup, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	p, d, err := open(setup, c, opts, "opening")
	if err != nil {
		return err
	}
	defer p.Close()
	if c.Write != "" {
		if err := writeOne(setup, c, opts, d, write); err != nil {
			return err
		}
	}
	var state []byte
	var covered int
	var missed uint64 // dropped before the state, which holds them
	d.Read(func(doc *document.Document) {
		state, err = doc.MarshalJSON()
		covered = len(d.Events()) // events the state already holds (Doc.Read)
		missed = d.Missed()
	})
	if err != nil {
		return fail(codeDrifted, exitFailed, "the document does not print as JSON: %v", err)
	}
	if err := line(out, state); err != nil {
		return err
	}
	if !c.Follow {
		return nil
	}
	return follow(ctx, d, covered, missed, out)
}

// open dials url and joins the document, naming what went wrong.
func open(ctx context.Context, c config, opts peer.Options, doing string) (*peer.Peer, *peer.Doc, error) {
	p, err := peer.Dial(ctx, c.URL, opts)
	if err != nil {
		var he *peer.HandshakeError
		switch {
		case ctx.Err() != nil:
			return nil, nil, stopped(ctx, c, doing)
		case errors.As(err, &he) && he.StatusCode != 0:
			return nil, nil, fail(codeHandshake, exitFailed, "%s answered HTTP %d: %s", c.URL, he.StatusCode, bytes.TrimSpace(he.Body))
		}
		return nil, nil, fail(codeConnect, exitFailed, "%s: %v", c.URL, err)
	}
	d, err := p.Join(ctx, c.Name)
	if c.Create != nil && protocol.ReasonOf(err) == protocol.NoDocument {
		// Another creator may win the race: that is root-mismatch, named.
		d, err = p.Share(ctx, c.Name, document.New(commit.NewID(), *c.Create, document.Limits{}))
	}
	if err != nil {
		p.Close()
		if ctx.Err() != nil {
			return nil, nil, stopped(ctx, c, doing)
		}
		if r := protocol.ReasonOf(err); r == protocol.NoDocument {
			return nil, nil, fail(string(r), exitFailed, "the gateway holds no document %q", c.Name)
		} else if r != "" {
			return nil, nil, fail(string(r), exitFailed, "opening %q: %v", c.Name, err)
		}
		return nil, nil, fail(codeEnded, exitFailed, "opening %q: %v", c.Name, err)
	}
	return p, d, nil
}

// stopped names why ctx ended: -timeout, or a signal.
func stopped(ctx context.Context, c config, doing string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fail(codeTimeout, exitFailed, "no answer within -timeout %v while %s %q", c.Timeout, doing, c.Name)
	}
	return fail(codeEnded, exitFailed, "interrupted while %s %q", doing, c.Name)
}

// writeOne commits w from a second link and waits for its verdict: a
// refusal comes to the writer, an acceptance shows as the commit arriving
// at d, the first link, as at every other member (the gateway sends no
// word for an accepted commit).
func writeOne(ctx context.Context, c config, opts peer.Options, d *peer.Doc, w commit.Commit) error {
	c.Create = nil // the first link holds it now
	q, wd, err := open(ctx, c, opts, "opening for the write")
	if err != nil {
		return err
	}
	defer q.Close()
	want, err := commit.Encode(w)
	if err != nil {
		return fail(codeBadCommit, exitUsage, "-write: %v", err)
	}
	if _, err := wd.Commit(w.Deltas...); err != nil {
		var rf *document.Refusal
		if errors.As(err, &rf) {
			f := fail(codeRefused, exitRefused, "the document refuses the commit as it stands")
			for _, r := range rf.Reasons {
				f.reasons = append(f.reasons, frame.Reason{Code: string(r.Reason), Message: r.Message, Path: r.Path})
			}
			return f
		}
		return fail(codeRefused, exitRefused, "the commit cannot be sent: %v", err)
	}
	for {
		select {
		case ev, ok := <-wd.Events():
			if !ok {
				return ended(wd)
			}
			if r, ok := ev.(peer.Refused); ok && r.Mine {
				f := fail(codeRefused, exitRefused, "the gateway refused the commit")
				f.reasons = r.Reasons
				return f
			}
		case ev, ok := <-d.Events():
			if !ok {
				return ended(d)
			}
			switch ev := ev.(type) {
			case peer.Applied:
				if got, err := commit.Encode(ev.Commit); err == nil && bytes.Equal(got, want) {
					return nil
				}
			case peer.Refused:
				return drifted(ev)
			}
		case <-ctx.Done():
			return stopped(ctx, c, "waiting for the verdict on the write to")
		}
	}
}

// follow prints each commit after the state, skipping the covered events
// the state already holds.
func follow(ctx context.Context, d *peer.Doc, covered int, missed uint64, out io.Writer) error {
	for {
		select {
		case ev, ok := <-d.Events():
			if !ok {
				return ended(d)
			}
			if n := d.Missed() - missed; n > 0 {
				return fail(codeFellBehind, exitFailed, "%d commits were dropped while output was slow; the stream has a gap", n)
			}
			skip := covered > 0
			covered--
			var c commit.Commit
			switch ev := ev.(type) {
			case peer.Applied:
				c = ev.Commit
			case peer.StateApplied:
				c = ev.Diff
			case peer.Refused:
				return drifted(ev)
			default:
				continue // Ended closes the channel next
			}
			if skip || len(c.Deltas) == 0 {
				continue
			}
			b, err := c.MarshalJSON()
			if err != nil {
				return fail(codeDrifted, exitFailed, "a commit does not print as JSON: %v", err)
			}
			if err := line(out, b); err != nil {
				return err
			}
		case <-ctx.Done():
			return nil // interrupted: following ends there
		}
	}
}

// ended names why d's events closed; Err is set once Done closes, just after.
func ended(d *peer.Doc) error {
	<-d.Done()
	return fail(codeEnded, exitFailed, "%v", d.Err())
}

func drifted(r peer.Refused) error {
	f := fail(codeDrifted, exitFailed, "the gateway's commit %d does not apply to the document as this peer holds it", r.Seq)
	f.reasons = r.Reasons
	return f
}

func line(out io.Writer, b []byte) error {
	if _, err := out.Write(append(b, '\n')); err != nil {
		return fail(codeOutput, exitFailed, "%v", err)
	}
	return nil
}

// parseWrite reads -write: a delta, an array of deltas or a commit, in the
// fixtures' JSON view.
func parseWrite(s string) (commit.Commit, error) {
	bad := func(format string, args ...any) error {
		return fail(codeBadCommit, exitUsage, "-write: "+format, args...)
	}
	b := bytes.TrimSpace([]byte(s))
	var c commit.Commit
	switch {
	case bytes.HasPrefix(b, []byte("[")):
		if err := json.Unmarshal(b, &c.Deltas); err != nil {
			return c, bad("%v", err)
		}
	case bytes.HasPrefix(b, []byte("{")):
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(b, &keys); err != nil {
			return c, bad("%v", err)
		}
		_, isCommit := keys["deltas"]
		_, hasType := keys["type"]
		_, hasOp := keys["op"]
		switch {
		case isCommit:
			if err := json.Unmarshal(b, &c); err != nil {
				return c, bad("%v", err)
			}
		case hasOp && !hasType:
			return c, bad(`a delta names its operation "type" (add, replace or remove), not "op"`)
		default:
			var d commit.Delta
			if err := json.Unmarshal(b, &d); err != nil {
				return c, bad("%v", err)
			}
			c.Deltas = []commit.Delta{d}
		}
	default:
		return c, bad("want a JSON delta, array of deltas or {\"deltas\": [...]}, got %.40q", strings.TrimSpace(s))
	}
	if c.Tag != nil {
		return c, bad("weftpeer does not write tags")
	}
	if _, err := commit.Encode(c); err != nil {
		return c, bad("%v", err)
	}
	return c, nil
}
