package gateway

import "github.com/weftgate/weftgate/protocol"

// The gateway's own reasons. They are few and stable; README.md lists them
// with what a client should do.
const (
	// ReasonSlowConsumer ends a link (fault on topic 0, close 1008) whose
	// socket did not keep up with its documents. Reconnect; the state is
	// resent.
	ReasonSlowConsumer = protocol.SlowConsumer
	// ReasonWriteTimeout ends a link (fault on topic 0, close 1008) whose
	// socket did not take a write within WriteTimeout. Reconnect.
	ReasonWriteTimeout = protocol.WriteTimeout
	// ReasonShutdown ends every link when the gateway stops (close 1001).
	ReasonShutdown protocol.Reason = "shutdown"
	// ReasonClosed is the local end of a link whose socket went away.
	ReasonClosed = protocol.Closed
	// ReasonForbidden answers an open the authority did not allow.
	ReasonForbidden protocol.Reason = "forbidden"
	// ReasonStoreUnavailable refuses a commit the store could not make
	// durable, and an open of a document that could not be loaded. Retry.
	ReasonStoreUnavailable = protocol.StoreUnavailable
	// ReasonCursorMismatch refuses a compare-and-swap write.
	ReasonCursorMismatch protocol.Reason = "cursor-mismatch"
	// ReasonTooManyDocuments answers an open when the gateway already holds
	// MaxDocuments in memory (or is shutting down). Retry later.
	ReasonTooManyDocuments protocol.Reason = "too-many-documents"
	// ReasonBadName answers an open whose document name the gateway cannot
	// hold: empty or longer than MaxNameBytes. Use a shorter name.
	ReasonBadName protocol.Reason = "bad-name"
	// ReasonInternal refuses a commit the gateway failed on; a defect.
	ReasonInternal = protocol.Internal
	// ReasonDocumentTooLarge refuses a commit, a state or a backend write
	// that would make a document's state larger than MaxDocumentBytes (a
	// joiner must receive it in one message), and faults a join whose state
	// cannot be sent.
	ReasonDocumentTooLarge = protocol.DocumentTooLarge
	// ReasonStateTimeout ends a creating peer's topic when its state did
	// not arrive within StateTimeout; the document is not created.
	ReasonStateTimeout protocol.Reason = "state-timeout"
	// ReasonTooManyOpens answers an open past MaxOpensPerSecond on one
	// link. Slow down.
	ReasonTooManyOpens protocol.Reason = "too-many-opens"
)
