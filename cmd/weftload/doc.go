// Command weftload loads a weftgate gateway the way its users do: N Go aweft
// peers (package peer) over real WebSockets on M documents, W of them
// writing per document at a rate or as fast as they can, the rest
// watching. Commits are small field edits, array inserts or large values
// (-shape). Each carries the time it was made and its writer, so every
// other member measures commit-to-delivery latency into an HDR-style
// histogram, and one member per writer hands its credit back: a writer has
// at most -window commits on their way, so an overloaded gateway slows the
// writers (counted as window waits) instead of ending their links.
//
// It prints commits sent, applied, refused, delivered, deliveries per
// second, latency p50 to max, connection set-up rate, the gateway's heap
// and RSS per link (from its /metrics, or from this process with
// -inprocess, where the peers are counted too) and errors by kind, as a
// table or JSON, with a progress line a second on stderr. With -authority
// an SDK backend (bridge/client) claims the documents and accepts every
// commit, so each one pays a gRPC verdict; its Accept never blocks, so it
// runs inline on the stream (client.Handlers.InlineAccept) unless
// -inline-accept=false.
//
// -watch raw and -write raw make watchers and writers bare sockets that
// speak just enough of the link (open, commits, and reading what arrives)
// and keep no replica, so the tool takes less of a host it shares with the
// gateway; the gateway sees the same frames either way. Each document's
// first member, which makes it, is always a full peer.
//
// -shape fanout is a scenario rather than a commit shape: one document,
// one writer of field commits, -readers members that each joined asking
// for state (issue #18's measure). It sets -peers, -docs and -writers, so
// it refuses them rather than quietly overriding them. Every commit
// carries its writer's sequence, so each member checks it got each commit
// once and in order: one its state covered or one seen before is a
// duplicate, one never seen is missing, and either makes the tool exit 2
// after printing, in any shape. Latency is also reported per
// -latency-window (10 s) by when each commit was made, so a gateway that
// falls behind shows as later windows with a higher p99; with the CPU
// time the run took (the gateway's from its /metrics, or with -inprocess
// the whole process's, tool included) it gives deliveries per CPU-second,
// and raw members count commits per frame. -store bolt puts the
// in-process gateway on bbolt, cmd/gateway's default, in a temporary
// directory.
//
// -url takes several comma-separated gateways of one cluster: writer j of
// a document goes to node j mod n, readers round-robin to the nodes after
// the first (so one writer's readers are all on other nodes), and a join
// that meets no-document, the creation not yet on the shared log, is
// retried until the dial timeout. -inprocess -nodes N starts an embedded
// nats-server and N gateways on JetStream stores (-store nats) in this
// process; gauges and CPU are summed over the nodes, and the result lists
// each node's links beside the members placed on it. With -authority its
// backend connects to the first node, and every node joins the question
// relay, so the others ask it over NATS; the run starts once each knows
// the backend's claim.
//
// It runs for -duration and exits by itself. It targets loopback only
// unless -allow-remote is given: this workplace forbids load off the
// machine, and load sent to someone else's gateway is an attack. It does
// not start cmd/gateway, retry failed links, or judge the figures.
package main
