// Package link is the aweft link state machine (replication.md v1): one
// conversation between two equal ends, carrying any number of topics.
//
// A Link is pure. It takes inputs (Receive for a decoded frame from the peer,
// BadFrame for one that decoded as a value but not as a frame; Share,
// Decline, DeclineWith, Send, SendState, Refuse, Resync, Leave, Fault,
// FaultLink and Close from the application) and queues outputs, which the
// caller drains after each input or batch of inputs: Flush for the frames to
// send, in order, and Events for what the application must hear, in order.
// An application that answers an event by calling the link again drains
// again. It starts no goroutine, reads no clock and does no I/O, and it
// treats commits as opaque bytes: it never decodes them, and it keeps the
// caller's slices (frames, events and the window alias them) without
// copying. A caller done with the frames Flush gave may hand them back
// with Recycle, and the link reuses their memory.
//
// Misuse (a call on a topic that is not ours, a state nobody asked for) is
// an error and sends nothing. Every bound is in Config and has a named
// outcome: too-many-topics, too-many-pending-commits, commit-too-large.
//
// A Link is not safe for concurrent use; one goroutine owns it.
//
// # Topics
//
// Each end numbers the topics it shares from 1 and never reuses a number.
// Frames name a topic by the sender's number, except that a fault answering
// a frame names the number that frame carried. So every fault this end
// sends about a topic names the peer's number, and every fault it receives
// names ours. A fault is never answered, so two ends cannot trade faults
// forever.
//
// A peer's open for a name we have not shared is reported as PeerOpened and
// held until the application calls Share (the gateway shares lazily) or
// Decline. A second open on the same topic before then is merged into it.
//
// Every topic number Share returned is ended by exactly one Ended event. A
// held PeerOpened that goes away before Share or Decline (the peer left, the
// link ended) is ended by an Ended event with Topic 0.
//
// # State
//
// A peer's want is reported as StateWanted once the topic is live, and
// answered by SendState. One state answers every want that arrived before it.
// While our own want from Share is outstanding and the peer's first open
// said it holds a document (want false), the peer's want is held until its
// state has arrived and StateArrived was emitted, so the application answers
// with the document that state produced and never wipes the peer with an
// empty one (the JS client's back-to-back opens on reconnect). A want from
// Resync does not hold, and neither does a want facing a peer that itself
// said it holds nothing: two ends that both held would wait for each other
// forever.
//
// # bad-frame
//
// A frame that decodes as a value but is malformed is answered through
// BadFrame (Receive also checks the frames it is given, by the rules
// frame.Decode applies, and routes the malformed ones there). With a usable
// topic (frame.BadFrameError.Topic: the topic element was a number >= 1 in a
// frame that is not a fault) it sends fault bad-frame naming that topic, as
// the peer's number, and ends our side of it; the link carries on. Without one
// it sends fault bad-frame on topic 0 and ends the link. Bytes that are not a
// value at all end the link without a word: that is the caller's (close the
// socket, then call Close so every topic hears it ended).
//
// The link does not apply, store or validate commits, pick a winner in a
// conflict, or resume anything: a new link is a new conversation.
package link
