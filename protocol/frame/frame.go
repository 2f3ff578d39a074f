package frame

import "github.com/weftgate/weftgate/protocol/commit"

// Kind is a frame's kind number (replication.md section 5).
type Kind uint8

const (
	Open    Kind = 0
	State   Kind = 1
	Commits Kind = 2
	Refused Kind = 3
	Leave   Kind = 4
	Fault   Kind = 5
)

func (k Kind) String() string {
	switch k {
	case Open:
		return "open"
	case State:
		return "state"
	case Commits:
		return "commits"
	case Refused:
		return "refused"
	case Leave:
		return "leave"
	case Fault:
		return "fault"
	}
	return "unknown"
}

// Root is the root an open states: its id and kind.
type Root struct {
	ID   commit.ID
	Kind commit.Kind
}

// Reason is one element of a refused frame: [code, message, path or null].
// A nil Path is null.
type Reason struct {
	Code    string
	Message string
	Path    []string
}

// Frame is one link frame. Which fields mean something depends on Kind:
//
//	Open:    Topic, Name, Root (nil when the sender holds nothing), Want
//	State:   Topic, State (the commit's bytes; nil means an empty document)
//	Commits: Topic, First, Commits (each an encoded commit, kept as bytes)
//	Refused: Topic, Seq, Reasons
//	Leave:   Topic
//	Fault:   Topic (0 is the link itself), Reason, Message
type Frame struct {
	Kind    Kind
	Topic   uint64
	Name    string
	Root    *Root
	Want    bool
	State   []byte
	First   uint64
	Commits [][]byte
	Seq     uint64
	Reasons []Reason
	Reason  string
	Message string
}
