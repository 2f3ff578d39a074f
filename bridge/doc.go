// Package bridge is the gateway's gRPC side: it serves weftgatev1's
// GatewayService to backends and plugs into the gateway as its Authority,
// Loader, admission Identifier and request-channel Calls, so that backends
// that claim documents answer for them, and the configured fallback policy
// (open or closed, per name pattern) answers for everything nobody claims.
//
// Questions (accept, load, identify, may_open, call) go to the most
// specific claim, then the oldest, carry ids, and are answered in any
// order; one that times out, or whose stream ends, is asked of the next
// claimant and finally answered by the policy, which under closed never
// accepts. Every queue is bounded and every bound has a named outcome.
// Subscribe, GetState, WriteCommit, ReplaceState, ListDocuments and the
// operator's DeleteDocument and EndLinks run over the gateway's in-process
// API. ServerOptions and Register add logging,
// bearer-token auth, panic recovery, health and reflection.
//
// It does not hold documents, order commits or store anything: the gateway
// does. It does not dial backends (they dial it), and it is not the Go SDK
// for backends (bridge/client is).
package bridge
