// Package certfile serves a TLS certificate from its PEM files and takes
// the files up again when they change, so a renewed certificate (a mounted
// secret's update, a renewal that rewrites the files) is served from the
// next handshake on, without a restart that would drop every link.
//
// A handshake looks at the files' modification times and sizes at most
// once per CheckEvery; it never waits for another handshake's look. A pair
// that does not load (a half-written renewal, a key that does not match)
// is reported and the old one is still served until the files change
// again.
//
// It does not watch directories or receive signals, fetch certificates, or
// reload client CAs; it does not log (Pair.Report hears each reload).
package certfile
