// Package natsrelay carries the authority's questions between gateway nodes
// that share a log on NATS (decision 034): a node whose own backends do not
// claim a question asks, by NATS request-reply, a node whose backends do.
//
// Each node keeps the claims in force on it in a JetStream KV bucket
// (WEFT_NODES), under its node id, refreshed while it lives; every node
// watches the bucket, so choosing where to ask is a local lookup. An entry
// not refreshed within the TTL is a lost node and is not asked.
//
// It implements bridge.Relay and answers other nodes through
// bridge.Server.AnswerRelayed. It does not judge anything, keep questions
// across a restart, or relay onward: a relayed question that no local
// claimant takes is answered "none", and the asking node falls back.
package natsrelay
