// Package requests is the text request channel of one socket (client notes
// section 9, design 073): JSON requests {"id","name","args"} from the
// browser, routed to a Calls implementation, and their answers
// {"id","result"}, {"id","progress"} and {"id","error"} written back.
//
// Parse and the Encode helpers are the wire form. A Channel runs the calls
// of one socket: at most Config.MaxInFlight at once (past that a request is
// answered "busy"), answered in any order, none started before Ready, all
// cancelled and waited for by Close. A message that is not a request-channel
// message is a protocol violation (ErrViolation): the caller closes the
// socket, as the JS end does.
//
// The package does not own the socket (the connection does, and gives a
// send function), read binary link frames, or ask the browser anything:
// server-initiated asks are not implemented, so every answer that arrives is
// one nobody waits for and is dropped.
package requests
