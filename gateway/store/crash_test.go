package store

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// crashEnv, when set, makes TestBoltCrashRecovery the child: it appends to
// the store in that directory until killed.
const crashEnv = "WEFTGATE_STORE_CRASH_DIR"

const (
	crashDocs   = 32
	crashRounds = 3
	crashKillAt = 3000 // acknowledgements read before the kill
)

func crashOptions() Options {
	return Options{Retain: 300, CheckpointRecords: 700}
}

// TestBoltCrashRecovery kills a process that is appending in a burst and
// checks that every append it acknowledged survives, with no gap, round
// after round (each child carries on from what the last one left).
func TestBoltCrashRecovery(t *testing.T) {
	if dir := os.Getenv(crashEnv); dir != "" {
		crashChild(dir)
		return
	}
	dir := t.TempDir()
	acked := make(map[string]uint64)
	snapped := make(map[string]uint64)
	for round := range crashRounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestBoltCrashRecovery$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		n := 0
		for sc.Scan() {
			var kind, doc string
			var c uint64
			if _, err := fmt.Sscanf(sc.Text(), "%s %s %d", &kind, &doc, &c); err != nil {
				continue // the test framework's own lines
			}
			switch kind {
			case "ACK":
				acked[doc] = max(acked[doc], c)
			case "SNAP":
				snapped[doc] = max(snapped[doc], c)
			case "ERR":
				cmd.Process.Kill()
				t.Fatalf("round %d: child: %s", round, sc.Text())
			default:
				continue
			}
			if n++; n == crashKillAt {
				cmd.Process.Kill() // SIGKILL; keep reading what it said before dying
			}
		}
		err = cmd.Wait()
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: child ended with %v before the kill (%d acks)\n%s", round, err, n, stderr.String())
		}
		if n < crashKillAt {
			t.Fatalf("round %d: only %d acks", round, n)
		}
		verifyCrash(t, dir, acked, snapped)
	}
}

func verifyCrash(t *testing.T, dir string, acked, snapped map[string]uint64) {
	t.Helper()
	s, err := Open(dir, crashOptions())
	if err != nil {
		t.Fatalf("reopen after the kill: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	if len(snapped) != crashDocs {
		t.Fatalf("%d documents acknowledged as created, want %d", len(snapped), crashDocs)
	}
	for doc := range snapped {
		want := acked[doc]
		in := info(t, s, doc)
		if in.Last < want {
			t.Fatalf("%s: last %d, but %d was acknowledged", doc, in.Last, want)
		}
		if in.Snapshot < snapped[doc] {
			t.Fatalf("%s: snapshot %d, but %d was acknowledged", doc, in.Snapshot, snapped[doc])
		}
		snap, _, err := s.Load(ctx, doc)
		if err != nil || snap.Cursor != in.Snapshot || string(snap.State) != fmt.Sprint("state@", in.Snapshot) {
			t.Fatalf("%s: load %+v %v", doc, snap, err)
		}
		next := in.Floor + 1
		for next <= in.Last {
			got, err := s.Read(ctx, doc, next, 0)
			if err != nil || len(got) == 0 {
				t.Fatalf("%s: read from %d (last %d): %d records, %v", doc, next, in.Last, len(got), err)
			}
			wantRecords(t, doc, got, next, next+uint64(len(got))-1)
			next += uint64(len(got))
		}
	}
}

// crashChild appends to every document from where it stands, reporting each
// acknowledged cursor on stdout, until it is killed.
func crashChild(dir string) {
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		mu.Lock()
		fmt.Fprintf(w, format+"\n", args...)
		w.Flush()
		mu.Unlock()
	}
	s, err := Open(dir, crashOptions())
	if err != nil {
		say("ERR open %v", strings.ReplaceAll(err.Error(), " ", "_"))
		os.Exit(2)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for d := range crashDocs {
		doc := fmt.Sprintf("doc%02d", d)
		wg.Add(1)
		go func() {
			defer wg.Done()
			in, err := s.Info(ctx, doc)
			if ReasonOf(err) == UnknownDocument {
				err = s.PutSnapshot(ctx, doc, Snapshot{State: []byte("state@0"), Root: rootOf(doc), RootKind: 2})
				if err == nil {
					say("SNAP %s 0", doc)
				}
			}
			if err != nil {
				say("ERR %s %v", doc, strings.ReplaceAll(err.Error(), " ", "_"))
				return
			}
			for c := in.Last + 1; c < in.Last+1_000_000; {
				n := uint64(1 + c%3)
				if err := s.Append(ctx, doc, recs(doc, c, int(n))); err != nil {
					say("ERR %s %v", doc, strings.ReplaceAll(err.Error(), " ", "_"))
					return
				}
				c += n
				say("ACK %s %d", doc, c-1)
				if c%97 < n {
					if err := s.PutSnapshot(ctx, doc, Snapshot{Cursor: c - 1, State: fmt.Append(nil, "state@", c-1), Root: rootOf(doc), RootKind: 2}); err != nil {
						say("ERR %s %v", doc, strings.ReplaceAll(err.Error(), " ", "_"))
						return
					}
					say("SNAP %s %d", doc, c-1)
				}
			}
		}()
	}
	wg.Wait()
	s.Close()
	os.Exit(3) // finished without being killed: the parent fails
}
