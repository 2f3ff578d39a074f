// Command weftload loads a weftgate gateway the way its users do: N Go aweft
// peers over real WebSockets on M documents, W of them writing per document
// at a rate (or as fast as they can), the rest watching. Each commit carries
// the time it was made, so watchers measure commit-to-delivery latency. It
// runs for a bounded time, prints a table (or JSON) and exits.
//
// It targets loopback only unless -allow-remote is given: load is a test of
// this machine's own gateway, never of someone else's. With -inprocess it
// starts a gateway in the same process, so heap per link is measured too.
package main
