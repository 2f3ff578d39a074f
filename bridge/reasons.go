package bridge

import "github.com/weftgate/weftgate/protocol"

// Reasons the bridge gives, stable strings in the aweft vocabulary's style.
const (
	// ReasonNoAuthority: nobody claims the name and the policy is closed.
	ReasonNoAuthority protocol.Reason = "no-authority"
	// ReasonAuthorityTimeout: claimants existed but none answered in time
	// (or their streams ended first) and the policy is closed.
	ReasonAuthorityTimeout = protocol.AuthorityTimeout
	// ReasonAuthorityBusy: every claimant's stream, or the document, has
	// as many questions unanswered as its bound allows.
	ReasonAuthorityBusy protocol.Reason = "authority-busy"
	// ReasonQuestionTooLarge: the question does not fit in one message.
	ReasonQuestionTooLarge protocol.Reason = "question-too-large"
	// ReasonAuthorityGone: the bridge is shutting down.
	ReasonAuthorityGone protocol.Reason = "authority-gone"

	// Claim refusals.
	ReasonTooManyClaims    protocol.Reason = "too-many-claims"
	ReasonInvalidClaim     protocol.Reason = "invalid-claim"
	ReasonDuplicateClaimID protocol.Reason = "duplicate-claim-id"

	// Write refusals.
	ReasonInvalidWrite         protocol.Reason = "invalid-write"
	ReasonDuplicateWriteID     protocol.Reason = "duplicate-write-id"
	ReasonTooManyPendingWrites protocol.Reason = "too-many-pending-writes"
	ReasonOriginTooLong        protocol.Reason = "origin-too-long"
	ReasonStoreUnavailable                     = protocol.StoreUnavailable
	ReasonInternal                             = protocol.Internal
	// ReasonUnavailable: the gateway is shutting down or the call ended.
	ReasonUnavailable protocol.Reason = "unavailable"
)
