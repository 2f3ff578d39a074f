// Package storetest is the conformance suite every store.Store
// implementation passes (bbolt, memory, JetStream), and the small helpers
// its cases share, so that each implementation is held to one contract.
//
// It is for tests only: it calls testing.T and fails fast. It does not
// start any service; an implementation that needs one (a NATS server)
// starts it in its own Suite.Open and says how its medium breaks through
// Suite.Break.
package storetest
