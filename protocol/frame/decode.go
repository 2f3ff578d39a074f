package frame

import (
	"fmt"

	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/wire"
)

// arity is the element count of each kind's array, kind number included
// (replication.md section 5).
var arity = [...]int{Open: 6, State: 3, Commits: 4, Refused: 4, Leave: 2, Fault: 4}

// Decode reads one frame from b, which must be exactly one frame.
//
// Bytes that are not one well-formed value fail with the wire error (a
// byte-level reason such as truncated); the caller should end the link.
// Bytes that are a value but not a frame fail with a *BadFrameError.
//
// The returned frame's State and Commits alias b: copy them before reusing
// b. Commit bytes are not checked beyond being non-empty byte strings;
// protocol/commit decodes them.
func Decode(b []byte) (Frame, error) {
	if err := wire.Scan(b); err != nil {
		return Frame{}, err
	}
	d := decoder{r: wire.NewReader(b)}
	if err := d.frame(); err != nil {
		return Frame{}, err
	}
	return d.f, nil
}

// decoder reads a frame from bytes that wire.Scan has passed, so every
// failure below is about the frame's shape, never about the bytes.
type decoder struct {
	r wire.Reader
	f Frame
	// addressable is set once f.Topic may be named in a BadFrameError.
	addressable bool
}

func (d *decoder) fail(off int, format string, args ...any) error {
	e := &BadFrameError{Message: fmt.Sprintf(format, args...), Offset: off}
	if d.addressable {
		e.Topic, e.Kind = d.f.Topic, d.f.Kind
	}
	return e
}

func (d *decoder) frame() error {
	start := d.r.Offset()
	n, ok := d.r.Array()
	if !ok {
		return d.fail(start, "a frame is an array")
	}
	if n == 0 {
		return d.fail(start, "a frame is a non-empty array")
	}
	off := d.r.Offset()
	k, ok := d.r.Uint()
	if !ok {
		return d.fail(off, "a frame's kind is a number from 0 to 5")
	}
	if k >= uint64(len(arity)) {
		return d.fail(off, "unknown frame kind %d", k)
	}
	d.f.Kind = Kind(k)
	if n >= 2 {
		if err := d.topic(); err != nil {
			return err
		}
	}
	if n != arity[k] {
		return d.fail(start, "a %s frame has %d elements, not %d", d.f.Kind, n, arity[k])
	}
	switch d.f.Kind {
	case Open:
		return d.open()
	case State:
		return d.state()
	case Commits:
		return d.commits()
	case Refused:
		return d.refused()
	case Fault:
		return d.fault()
	}
	return nil // Leave: the topic is all it carries
}

func (d *decoder) topic() error {
	off := d.r.Offset()
	t, ok := d.r.Uint()
	if !ok {
		return d.fail(off, "a topic is a number")
	}
	d.f.Topic = t
	if t == 0 {
		if d.f.Kind != Fault {
			return d.fail(off, "topic 0 names the link, and only a fault may name it")
		}
		return nil
	}
	d.addressable = d.f.Kind != Fault
	return nil
}

func (d *decoder) text(what string) (string, error) {
	off := d.r.Offset()
	s, ok := d.r.Text()
	if !ok {
		return "", d.fail(off, "%s is text", what)
	}
	return s, nil
}

// seq reads a first or seq element: sequences start at 1.
func (d *decoder) seq(what string) (uint64, error) {
	off := d.r.Offset()
	s, ok := d.r.Uint()
	if !ok {
		return 0, d.fail(off, "%s is a number", what)
	}
	if s == 0 {
		return 0, d.fail(off, "%s is 0, and sequences start at 1", what)
	}
	return s, nil
}

// list reads the head of a non-empty array.
func (d *decoder) list(what string) (int, error) {
	off := d.r.Offset()
	n, ok := d.r.Array()
	if !ok {
		return 0, d.fail(off, "%s is an array", what)
	}
	if n == 0 {
		return 0, d.fail(off, "%s is empty", what)
	}
	return n, nil
}

func (d *decoder) open() error {
	var err error
	if d.f.Name, err = d.text("a name"); err != nil {
		return err
	}
	idOff := d.r.Offset()
	var id []byte
	hasID := !d.r.Null()
	if hasID {
		var ok bool
		if id, ok = d.r.Bytes(); !ok {
			return d.fail(idOff, "a root id is bytes or null")
		}
		if len(id) != len(commit.ID{}) {
			return d.fail(idOff, "a root id is %d bytes, not %d", len(commit.ID{}), len(id))
		}
	}
	kindOff := d.r.Offset()
	var kind uint64
	hasKind := !d.r.Null()
	if hasKind {
		var ok bool
		if kind, ok = d.r.Uint(); !ok || kind > uint64(commit.Map) {
			return d.fail(kindOff, "a root kind is 0, 1, 2 or null")
		}
	}
	if hasID != hasKind {
		return d.fail(idOff, "a root is an id and a kind, or neither")
	}
	wantOff := d.r.Offset()
	want, ok := d.r.Bool()
	if !ok {
		return d.fail(wantOff, "want is a boolean")
	}
	if !hasID && !want {
		return d.fail(wantOff, "an end that holds nothing must want the other end's state")
	}
	if hasID {
		r := &Root{Kind: commit.Kind(kind)}
		copy(r.ID[:], id)
		d.f.Root = r
	}
	d.f.Want = want
	return nil
}

func (d *decoder) state() error {
	if d.r.Null() {
		return nil // an empty document
	}
	off := d.r.Offset()
	c, ok := d.r.Bytes()
	if !ok {
		return d.fail(off, "a state is a commit's bytes or null")
	}
	if len(c) == 0 {
		return d.fail(off, "a state's commit is empty, and a commit is never empty")
	}
	d.f.State = c
	return nil
}

func (d *decoder) commits() error {
	var err error
	if d.f.First, err = d.seq("first"); err != nil {
		return err
	}
	n, err := d.list("a commits frame's list of commits")
	if err != nil {
		return err
	}
	cs := make([][]byte, n)
	for i := range cs {
		off := d.r.Offset()
		c, ok := d.r.Bytes()
		if !ok {
			return d.fail(off, "commit %d is not bytes", i)
		}
		if len(c) == 0 {
			return d.fail(off, "commit %d is empty, and a commit is never empty", i)
		}
		cs[i] = c
	}
	d.f.Commits = cs
	return nil
}

func (d *decoder) refused() error {
	var err error
	if d.f.Seq, err = d.seq("seq"); err != nil {
		return err
	}
	n, err := d.list("a refused frame's list of reasons")
	if err != nil {
		return err
	}
	rs := make([]Reason, n)
	for i := range rs {
		if rs[i], err = d.reason(i); err != nil {
			return err
		}
	}
	d.f.Reasons = rs
	return nil
}

func (d *decoder) reason(i int) (Reason, error) {
	var r Reason
	off := d.r.Offset()
	n, ok := d.r.Array()
	if !ok || n != 3 {
		return r, d.fail(off, "reason %d is not [code, message, path or null]", i)
	}
	var err error
	if r.Code, err = d.text("a reason's code"); err != nil {
		return r, err
	}
	if r.Message, err = d.text("a reason's message"); err != nil {
		return r, err
	}
	if d.r.Null() {
		return r, nil
	}
	off = d.r.Offset()
	m, ok := d.r.Array()
	if !ok {
		return r, d.fail(off, "reason %d's path is a list of text steps or null", i)
	}
	// An empty path is the root itself, which is not the same as no path.
	r.Path = make([]string, m)
	for j := range r.Path {
		if r.Path[j], err = d.text("a path step"); err != nil {
			return r, err
		}
	}
	return r, nil
}

func (d *decoder) fault() error {
	var err error
	if d.f.Reason, err = d.text("a fault's reason"); err != nil {
		return err
	}
	d.f.Message, err = d.text("a fault's message")
	return err
}
