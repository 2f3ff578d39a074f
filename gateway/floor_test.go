package gateway_test

import (
	"fmt"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSocketFloor is what one small message costs on this host's
// loopback with no gateway at all: N TCP pairs in this process, a writer
// goroutine per socket woken for each message (as a link's loop is), a
// reader goroutine per socket (as a load peer is). One op is one message
// to each of the N sockets. cpu-us/msg is the process's CPU (both ends)
// per message: no fan-out over these sockets can deliver more messages a
// second than the host's cores divided by it (decision 013).
func BenchmarkSocketFloor(b *testing.B) {
	for _, n := range []int{100, 5000} {
		b.Run(fmt.Sprintf("sockets=%d", n), func(b *testing.B) { benchSocketFloor(b, n, 80) })
	}
}

func benchSocketFloor(b *testing.B, n, size int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	servers := make([]net.Conn, 0, n)
	accepted := make(chan error, 1)
	go func() {
		for range n {
			c, err := ln.Accept()
			if err != nil {
				accepted <- err
				return
			}
			servers = append(servers, c)
		}
		accepted <- nil
	}()
	clients := make([]net.Conn, n)
	for i := range clients {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatalf("dial %d of %d (file limit?): %v", i, n, err)
		}
		clients[i] = c
	}
	if err := <-accepted; err != nil {
		b.Fatal(err)
	}
	defer func() {
		for i := range n {
			clients[i].Close()
			servers[i].Close()
		}
	}()

	want := int64(b.N) * int64(size)
	var readers sync.WaitGroup
	readErr := make(chan error, n)
	for _, c := range clients {
		readers.Add(1)
		go func() {
			defer readers.Done()
			buf := make([]byte, 4096)
			for got := int64(0); got < want; {
				k, err := c.Read(buf)
				if err != nil {
					readErr <- fmt.Errorf("after %d of %d bytes: %w", got, want, err)
					return
				}
				got += int64(k)
			}
		}()
	}
	msg := make([]byte, size)
	wake := make([]chan struct{}, n)
	var writers sync.WaitGroup
	writeErr := make(chan error, n)
	for i, c := range servers {
		wake[i] = make(chan struct{}, 1)
		writers.Add(1)
		go func() {
			defer writers.Done()
			failed := false
			for range wake[i] {
				if failed {
					continue
				}
				if _, err := c.Write(msg); err != nil {
					writeErr <- err
					failed = true
					c.Close() // its reader then ends instead of waiting
				}
			}
		}()
	}

	b.ReportAllocs()
	cpu := cpuNanos()
	start := time.Now()
	b.ResetTimer()
	for range b.N {
		for _, w := range wake {
			w <- struct{}{}
		}
	}
	for _, w := range wake {
		close(w)
	}
	writers.Wait()
	readers.Wait()
	b.StopTimer()
	elapsed := time.Since(start)
	used := cpuNanos() - cpu
	close(readErr)
	close(writeErr)
	for err := range writeErr {
		b.Fatal("write:", err)
	}
	for err := range readErr {
		b.Fatal("read:", err)
	}
	msgs := float64(b.N) * float64(n)
	b.ReportMetric(msgs/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(used)/1e3/msgs, "cpu-us/msg")
	b.ReportMetric(0, "ns/op") // msgs/s says it
}

// cpuNanos is this process's user and system CPU so far.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
