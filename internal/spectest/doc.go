// Package spectest locates the aweft spec corpus for tests. By default it is
// the copy in testdata/aweft/spec at the repository root (JSON fixtures and
// frames, byte for byte as published upstream, checked against
// testdata/aweft/manifest.json), so a fresh clone tests on its own.
// WEFTGATE_SPEC points at another corpus, such as a newer upstream spec/.
// It does not fetch, edit or regenerate fixtures; a missing corpus fails the
// test loudly.
package spectest
