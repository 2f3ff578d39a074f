package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"runtime/trace"
	"time"

	"github.com/weftgate/weftgate/internal/gcfloor"
)

func main() {
	var o options
	flag.StringVar(&o.url, "url", "ws://127.0.0.1:8080/", "the gateway to load, or several comma-separated nodes of one cluster (loopback unless -allow-remote; start each with -rate-limit 0, every peer comes from one address): writer j of a document goes to node j mod n, readers round-robin to the nodes after the first, so one writer's readers are on other nodes")
	flag.BoolVar(&o.inprocess, "inprocess", false, "start a gateway (and with -authority a gRPC bridge), or -nodes of them, in this process on 127.0.0.1; heap then counts the peers too")
	flag.IntVar(&o.nodes, "nodes", 1, "with -inprocess: gateways sharing one embedded nats-server (-store nats), placed on as -url places them; gauges and CPU sum over them")
	flag.BoolVar(&o.allowRemote, "allow-remote", false, "allow a non-loopback -url or -grpc (this workplace forbids load off the machine)")
	flag.StringVar(&o.metrics, "metrics", "", "the gateways' Prometheus pages for heap, RSS and links, comma-separated in -url order, summed (empty: /metrics beside each -url; - for none)")
	flag.BoolVar(&o.authority, "authority", false, "put an SDK backend in the loop that claims the documents and accepts every commit")
	flag.BoolVar(&o.inlineAccept, "inline-accept", true, "the -authority's Accept runs on its stream's receive loop (client.Handlers.InlineAccept): it never blocks")
	flag.StringVar(&o.grpc, "grpc", "127.0.0.1:9090", "the gateway's gRPC address for -authority")
	flag.StringVar(&o.grpcToken, "grpc-token", os.Getenv("WEFTGATE_GRPC_TOKEN"), "bearer token for -grpc (default $WEFTGATE_GRPC_TOKEN)")
	flag.IntVar(&o.peers, "peers", 100, "peers, one WebSocket each, spread over the documents")
	flag.IntVar(&o.docs, "docs", 10, "documents")
	flag.IntVar(&o.writers, "writers", 1, "writers per document; the other peers watch")
	flag.Float64Var(&o.rate, "rate", 100, "commits per second per writer (0: as fast as the window allows)")
	flag.IntVar(&o.window, "window", 16, "commits a writer may have on their way (not yet seen by its observer)")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "how long to write")
	flag.DurationVar(&o.settle, "settle", 0, "idle time between connecting and writing (heap per idle link is read after it)")
	flag.StringVar(&o.shape, "shape", shapeField, "commit shape: field, insert (into an array) or large; or fanout, a whole scenario: one document, one writer of field commits, -readers peers that each ask for state, every commit checked to reach every reader once (it sets -peers, -docs and -writers, so it refuses them)")
	flag.IntVar(&o.readers, "readers", 0, "with -shape fanout: readers on the document (-watch raw costs the shared host less at thousands)")
	flag.DurationVar(&o.winLen, "latency-window", defaultWindow, "latency p50, p99 and max are also reported per window of this length, by when each commit was made")
	flag.StringVar(&o.store, "store", storeMemory, "with -inprocess: the gateways' store, memory, bolt (cmd/gateway's default, in a temporary directory) or nats (JetStream on an embedded nats-server; the default with -nodes above 1)")
	flag.IntVar(&o.size, "size", 0, "bytes of text per commit (0: 16, or 64 KiB for large)")
	flag.StringVar(&o.watch, "watch", watchPeer, "watchers: peer (a full aweft end with a replica) or raw (a bare socket that decodes frames and commits, so the tool costs the host less)")
	flag.StringVar(&o.write, "write", watchPeer, "writers: peer (a full aweft end) or raw (a bare socket that sends encoded commits and decodes what arrives; each document's first writer, which makes it, stays a peer)")
	flag.IntVar(&o.dialers, "dialers", 16, "peers connecting at once")
	flag.BoolVar(&o.jsonOut, "json", false, "print the result as JSON")
	flag.StringVar(&o.memprofile, "memprofile", "", "write a heap profile of this process (with -inprocess, the gateway's too) once the links have settled")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of this process (with -inprocess, the gateway's too) to the file")
	traceOut := flag.String("trace", "", "write an execution trace of this process (go tool trace) to the file")
	gcFloor := flag.Uint64("gc-floor", gcfloor.DefaultFloor, "heap bytes this process's collector lets a small heap grow to, as the gateway's -gc-floor (0: Go's default; ignored when GOGC is set)")
	flag.Parse()
	o.set = map[string]bool{}
	flag.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	gcfloor.Set(*gcFloor, os.Getenv)
	for _, p := range []struct {
		path  string
		start func(io.Writer) error
		stop  func()
	}{{*cpuprofile, pprof.StartCPUProfile, pprof.StopCPUProfile}, {*traceOut, trace.Start, trace.Stop}} {
		if p.path == "" {
			continue
		}
		f, err := os.Create(p.path)
		if err == nil {
			err = p.start(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "weftload:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer p.stop()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := run(ctx, o, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "weftload:", err)
		pprof.StopCPUProfile()
		trace.Stop()
		os.Exit(1)
	}
	if o.jsonOut {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(res)
	} else {
		res.print(os.Stdout)
	}
	if !res.ok() {
		pprof.StopCPUProfile()
		trace.Stop()
		os.Exit(2) // a commit missed or repeated is a failed run, whatever the figures
	}
}
