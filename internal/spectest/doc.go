// Package spectest locates the aweft spec corpus for tests. The corpus lives
// in ../shared/aweft-spec/spec beside the repository root and is read at test
// time, never copied; a missing corpus fails the test loudly.
package spectest
