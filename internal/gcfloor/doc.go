// Package gcfloor keeps Go's collector from running far more often than a
// server needs while its live heap is small. Go collects each time the heap
// doubles, with a minimum of 4 MiB: a gateway with a few MiB live that
// allocates a few hundred MB a second (every commit, question and frame)
// collects dozens of times a second. Below a floor, the heap may grow to
// the floor between collections; once the live heap is past half of it, Go's
// own rule (GOGC=100) applies again, so the heap is never larger than the
// floor or twice what is live, whichever is more.
//
// After every collection it sets GOGC from the live heap that collection
// marked (runtime/metrics /gc/heap/live:bytes). It does not use
// bytedance/gopkg's gctuner, which reads HeapInuse, garbage not yet swept
// included, and so swings between high and low targets under a steady load
// (decision 010). It leaves GOGC to an operator who sets it, and it is
// process-wide: binaries call it, never libraries.
package gcfloor
