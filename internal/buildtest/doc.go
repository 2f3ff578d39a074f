// Package buildtest builds a command of this module for a test that runs
// it as a separate process (the gateway binary, an example backend): once
// per package path and test process, statically, into a temporary
// directory that Cleanup removes.
//
// It does not start the process or read its output: each test knows what
// its process prints and when it is ready.
package buildtest
