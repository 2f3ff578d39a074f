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
// It runs for -duration and exits by itself. It targets loopback only
// unless -allow-remote is given: this workplace forbids load off the
// machine, and load sent to someone else's gateway is an attack. It does
// not start cmd/gateway, retry failed links, or judge the figures.
package main
