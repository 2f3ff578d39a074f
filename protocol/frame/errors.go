package frame

import "github.com/weftgate/weftgate/protocol"

// BadFrameError says that bytes were one well-formed value but not a frame.
// It unwraps to a *protocol.Error with reason bad-frame, so
// protocol.ReasonOf reports bad-frame.
//
// Topic is the topic number the frame named when it was usable for
// addressing a fault back: a known kind other than fault, and a number of at
// least 1 (a fault names the receiver's own number, and a fault is never
// answered). It is 0 otherwise, and then only the link can be faulted.
type BadFrameError struct {
	Topic   uint64
	Kind    Kind // meaningful only when Topic is not 0
	Message string
	Offset  int // byte offset of the element at fault
}

func (e *BadFrameError) Error() string {
	return string(protocol.BadFrame) + ": " + e.Message
}

// Unwrap gives the shared error value, so callers that only know
// *protocol.Error see the reason, message and offset.
func (e *BadFrameError) Unwrap() error {
	return &protocol.Error{Reason: protocol.BadFrame, Message: e.Message, Offset: e.Offset}
}
