package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/internal/protocodec"
)

// procMemory reads a process's resident set (VmRSS) and its peak so far
// (VmHWM) from /proc, in bytes.
func procMemory(t *testing.T, pid int) (rss, peak int64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("the gateway's memory: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			t.Fatalf("%s: %q", k, v)
		}
		if k == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	if rss == 0 || peak == 0 {
		t.Fatalf("no VmRSS or VmHWM in /proc/%d/status", pid)
	}
	return rss, peak
}

// sameBytes sends one pre-encoded request for every call, so 48 calls of
// 15 MiB cost the test 15 MiB, not 720.
type sameBytes struct{ b []byte }

func (c sameBytes) Marshal(any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(c.b)}, nil
}
func (sameBytes) Unmarshal(data mem.BufferSlice, v any) error {
	return protocodec.Codec{}.Unmarshal(data, v)
}
func (sameBytes) Name() string { return "proto" }

// Issue 19 item 2: 48 concurrent GetState calls without a token, each
// naming a 15 MiB document, took the gateway from 15 MB to 1.8 GB, for
// good: every body was read before the token was checked. Now the token
// is checked on the headers, and no body is read.
func TestBinaryUnauthenticatedCallsCostNoMemory(t *testing.T) {
	const (
		token  = "a-token-of-enough-bytes"
		calls  = 48
		growth = 100 << 20
	)
	p := startGateway(t, t.TempDir(), "-store", "memory", "-grpc-token", token)
	pid := p.cmd.Process.Pid
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The authenticated path works, and has run once before the baseline.
	good, err := grpc.NewClient(p.addrs.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(bearerToken(token)))
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	if _, err := v1.NewGatewayServiceClient(good).GetState(ctx, &v1.GetStateRequest{Document: "d"}); status.Code(err) != codes.NotFound {
		t.Fatalf("an authenticated GetState of a name never written: %v, want NotFound", err)
	}
	baseRSS, basePeak := procMemory(t, pid)

	body, err := proto.Marshal(&v1.GetStateRequest{Document: strings.Repeat("n", 15<<20)})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := grpc.NewClient(p.addrs.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(sameBytes{body})))
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	client := v1.NewGatewayServiceClient(bad)
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			_, errs[i] = client.GetState(ctx, &v1.GetStateRequest{})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if status.Code(err) != codes.Unauthenticated {
			t.Fatalf("call %d: %v, want Unauthenticated", i, err)
		}
	}

	if got := p.status().Authority.Unauthenticated; got != calls {
		t.Errorf("/status counts %d unauthenticated calls, want %d", got, calls)
	}
	rss, peak := procMemory(t, pid)
	if peak-basePeak >= growth {
		t.Fatalf("the gateway's peak RSS grew by %d MiB (from %d MiB), want under %d", (peak-basePeak)>>20, basePeak>>20, growth>>20)
	}
	if rss-baseRSS >= growth {
		t.Fatalf("the gateway's RSS stayed %d MiB above its %d MiB", (rss-baseRSS)>>20, baseRSS>>20)
	}
	// It still serves those who have the token.
	if _, err := v1.NewGatewayServiceClient(good).GetState(ctx, &v1.GetStateRequest{Document: "d"}); status.Code(err) != codes.NotFound {
		t.Fatalf("an authenticated GetState after the attack: %v, want NotFound", err)
	}
	t.Logf("RSS %d -> %d MiB, peak %d -> %d MiB", baseRSS>>20, rss>>20, basePeak>>20, peak>>20)
}

// bearerToken is per-RPC credentials carrying a token over plaintext.
type bearerToken string

func (b bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}
func (bearerToken) RequireTransportSecurity() bool { return false }

// -grpc-max-connections bounds connections: past it a new one waits,
// unread, until one closes.
func TestBinaryBoundsGRPCConnections(t *testing.T) {
	p := startGateway(t, t.TempDir(), "-store", "memory", "-grpc-max-connections", "1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dial := func() (*grpc.ClientConn, v1.GatewayServiceClient) {
		cc, err := grpc.NewClient(p.addrs.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		return cc, v1.NewGatewayServiceClient(cc)
	}
	first, c1 := dial()
	defer first.Close()
	if _, err := c1.ListDocuments(ctx, &v1.ListDocumentsRequest{}); err != nil {
		t.Fatalf("the first connection: %v", err)
	}
	second, c2 := dial()
	defer second.Close()
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	_, err := c2.ListDocuments(short, &v1.ListDocumentsRequest{}, grpc.WaitForReady(true))
	cancelShort()
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("a second connection while the first is open: %v, want it to wait", err)
	}
	first.Close()
	if _, err := c2.ListDocuments(ctx, &v1.ListDocumentsRequest{}, grpc.WaitForReady(true)); err != nil {
		t.Fatalf("the second connection once the first closed: %v", err)
	}
}
