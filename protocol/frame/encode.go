package frame

import (
	"fmt"
	"unicode/utf8"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/wire"
)

// Encode returns the bytes of f: one binary WebSocket message.
func Encode(f Frame) ([]byte, error) {
	if err := check(f); err != nil {
		return nil, err
	}
	return write(make([]byte, 0, size(f)), f), nil
}

// Append appends the bytes of f to dst. On error dst is returned as it was.
//
// Encode and Append refuse (bad-frame) any frame Decode would refuse, so
// what they write always decodes to the same frame. Fields that do not
// belong to f.Kind are ignored.
func Append(dst []byte, f Frame) ([]byte, error) {
	if err := check(f); err != nil {
		return dst, err
	}
	return write(dst, f), nil
}

func write(b []byte, f Frame) []byte {
	b = wire.AppendArray(b, arity[f.Kind])
	b = wire.AppendUint(b, uint64(f.Kind))
	b = wire.AppendUint(b, f.Topic)
	switch f.Kind {
	case Open:
		b = wire.AppendText(b, f.Name)
		if f.Root == nil {
			b = wire.AppendNull(wire.AppendNull(b))
		} else {
			b = wire.AppendBytes(b, f.Root.ID[:])
			b = wire.AppendUint(b, uint64(f.Root.Kind))
		}
		b = wire.AppendBool(b, f.Want)
	case State:
		if f.State == nil {
			b = wire.AppendNull(b)
		} else {
			b = wire.AppendBytes(b, f.State)
		}
	case Commits:
		b = wire.AppendUint(b, f.First)
		b = wire.AppendArray(b, len(f.Commits))
		for _, c := range f.Commits {
			b = wire.AppendBytes(b, c)
		}
	case Refused:
		b = wire.AppendUint(b, f.Seq)
		b = wire.AppendArray(b, len(f.Reasons))
		for _, r := range f.Reasons {
			b = wire.AppendArray(b, 3)
			b = wire.AppendText(b, r.Code)
			b = wire.AppendText(b, r.Message)
			if r.Path == nil {
				b = wire.AppendNull(b)
				continue
			}
			b = wire.AppendArray(b, len(r.Path))
			for _, s := range r.Path {
				b = wire.AppendText(b, s)
			}
		}
	case Fault:
		b = wire.AppendText(b, f.Reason)
		b = wire.AppendText(b, f.Message)
	}
	return b
}

// check refuses what Decode would refuse, so Encode never writes a frame
// the other end must treat as bad.
func check(f Frame) error {
	if int(f.Kind) >= len(arity) {
		return refuse("unknown frame kind %d", f.Kind)
	}
	if f.Topic > MaxNumber {
		return refuse("topic %d is above 2^53", f.Topic)
	}
	if f.Topic == 0 && f.Kind != Fault {
		return refuse("a %s frame names topic 0, and only a fault may name the link", f.Kind)
	}
	switch f.Kind {
	case Open:
		if err := checkText("name", f.Name); err != nil {
			return err
		}
		if f.Root == nil && !f.Want {
			return refuse("an open with no root must want the other end's state")
		}
		if f.Root != nil && f.Root.Kind > commit.Map {
			return refuse("root kind %d is not object, array or map", f.Root.Kind)
		}
	case State:
		if f.State != nil && len(f.State) == 0 {
			return refuse("a state's commit is empty; an empty document is a nil State")
		}
	case Commits:
		if err := checkSeq("first", f.First); err != nil {
			return err
		}
		if len(f.Commits) == 0 {
			return refuse("a commits frame carries at least one commit")
		}
		for i, c := range f.Commits {
			if len(c) == 0 {
				return refuse("commit %d is empty", i)
			}
		}
	case Refused:
		if err := checkSeq("seq", f.Seq); err != nil {
			return err
		}
		if len(f.Reasons) == 0 {
			return refuse("a refused frame carries at least one reason")
		}
		for _, r := range f.Reasons {
			if err := checkReason(r); err != nil {
				return err
			}
		}
	case Fault:
		if err := checkText("fault reason", f.Reason); err != nil {
			return err
		}
		return checkText("fault message", f.Message)
	}
	return nil
}

func checkSeq(what string, s uint64) error {
	if s == 0 || s > MaxNumber {
		return refuse("%s %d is outside 1 to 2^53", what, s)
	}
	return nil
}

func checkReason(r Reason) error {
	if err := checkText("reason code", r.Code); err != nil {
		return err
	}
	if err := checkText("reason message", r.Message); err != nil {
		return err
	}
	for _, s := range r.Path {
		if err := checkText("path step", s); err != nil {
			return err
		}
	}
	return nil
}

func checkText(what, s string) error {
	if !utf8.ValidString(s) {
		return refuse("%s is not UTF-8", what)
	}
	return nil
}

func refuse(format string, args ...any) error {
	return protocol.Errorf(protocol.BadFrame, "frame: cannot encode: "+fmt.Sprintf(format, args...))
}

// size is an upper bound on the encoded length, so Encode allocates once.
func size(f Frame) int {
	n := 3*9 + len(f.Name) + 9 + len(commit.ID{}) + 2 + len(f.State) + 9 + len(f.Reason) + len(f.Message) + 18
	for _, c := range f.Commits {
		n += 9 + len(c)
	}
	for _, r := range f.Reasons {
		n += 1 + 18 + len(r.Code) + len(r.Message) + 9
		for _, s := range r.Path {
			n += 9 + len(s)
		}
	}
	return n
}
