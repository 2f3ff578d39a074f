package requests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/weftgate/weftgate/gateway/admission"
)

var caller = Caller{Identity: admission.Identity{ID: "u1", Roles: []string{"editor"}}, Link: "c7", RemoteAddr: "192.0.2.1"}

func TestRouting(t *testing.T) {
	got := make(chan Call, 1)
	c, s := ready(t, CallsFunc(func(_ context.Context, call Call, _ func(json.RawMessage)) (json.RawMessage, error) {
		got <- call
		return json.RawMessage(`{"ok":true}`), nil
	}), Config{})
	receive(t, c, `{"id":4,"name":"doc/Rename","args":{"to":"b"}}`)
	call := wait(t, got)
	want := Call{ID: 4, Name: "doc/Rename", Args: json.RawMessage(`{"to":"b"}`), Caller: caller}
	if !reflect.DeepEqual(call, want) {
		t.Fatalf("call %+v, want %+v", call, want)
	}
	s.want(t, `{"id":4,"result":{"ok":true}}`)
	receive(t, c, `{"id":5,"name":"x"}`)
	if call := wait(t, got); string(call.Args) != "null" {
		t.Fatalf("absent args %q, want null", call.Args)
	}
	s.want(t, `{"id":5,"result":{"ok":true}}`)
}

func TestDefaultIsMissing(t *testing.T) {
	s := newSink()
	c := NewChannel(nil, caller, s.send)
	defer c.Close()
	c.Ready()
	receive(t, c, `{"id":1,"name":"report/Daily","args":null}`)
	s.want(t, `{"id":1,"error":{"reason":"missing","message":"nothing here answers report/Daily"}}`)
	receive(t, c, `{"id":2,"name":"`+strings.Repeat("n", maxEchoedName+1)+`"}`)
	s.want(t, `{"id":2,"error":{"reason":"missing","message":"nothing here answers this call"}}`)
}

func TestMux(t *testing.T) {
	var m Mux
	m.Handle("a", Handler(func(context.Context, Call, Responder) (any, error) { return "from a", nil }))
	c, s := ready(t, &m, Config{})
	receive(t, c, `{"id":1,"name":"a"}`)
	s.want(t, `{"id":1,"result":"from a"}`)
	receive(t, c, `{"id":2,"name":"b"}`)
	s.want(t, `{"id":2,"error":{"reason":"missing","message":"nothing here answers b"}}`)
}

func TestProgressThenResult(t *testing.T) {
	stash := make(chan func(json.RawMessage), 1)
	c, s := ready(t, CallsFunc(func(_ context.Context, call Call, progress func(json.RawMessage)) (json.RawMessage, error) {
		progress(json.RawMessage(`0.5`))
		progress(json.RawMessage(`not json`)) // dropped
		progress(nil)
		stash <- progress
		return nil, nil
	}), Config{})
	receive(t, c, `{"id":9,"name":"slow"}`)
	s.want(t, `{"id":9,"progress":0.5}`, `{"id":9,"progress":null}`, `{"id":9,"result":null}`)
	// Progress after the result is dropped.
	wait(t, stash)(json.RawMessage(`1`))
	c.Close()
	if n := len(s.all()); n != 3 {
		t.Fatalf("sent %d messages, want 3: %q", n, s.all())
	}
}

func TestHandlerValues(t *testing.T) {
	progressErr := make(chan error, 1)
	c, s := ready(t, Handler(func(_ context.Context, call Call, r Responder) (any, error) {
		switch call.Name {
		case "progress":
			if err := r.Progress(map[string]int{"done": 1}); err != nil {
				return nil, err
			}
			progressErr <- r.Progress(func() {})
			return []int{1, 2}, nil
		case "nil":
			return nil, nil
		case "chan":
			return make(chan int), nil
		}
		return nil, errors.New("unreachable")
	}), Config{})
	receive(t, c, `{"id":1,"name":"progress"}`)
	s.want(t, `{"id":1,"progress":{"done":1}}`, `{"id":1,"result":[1,2]}`)
	if err := wait(t, progressErr); !errors.Is(err, ErrNotData) {
		t.Fatalf("Progress(func): %v, want ErrNotData", err)
	}
	receive(t, c, `{"id":2,"name":"nil"}`)
	s.want(t, `{"id":2,"result":null}`)
	receive(t, c, `{"id":3,"name":"chan"}`)
	s.want(t, `{"id":3,"error":{"reason":"not-data","message":"the result could not be encoded as JSON"}}`)
}

func TestErrorMapping(t *testing.T) {
	refusal := &admission.Refusal{Reasons: []admission.Reason{{Code: "no-role", Message: "editors only"}, {Code: "", Message: "dropped"}}}
	cases := []struct {
		name   string
		result json.RawMessage
		err    error
		panic  bool
		want   string
	}{
		{"refusal", nil, refusal,
			false, `{"error":{"reason":"refused","message":"the call was refused","reasons":[{"code":"no-role","message":"editors only"}]}}`},
		{"wrapped refusal", nil, fmt.Errorf("gate: %w", refusal),
			false, `{"error":{"reason":"refused","message":"the call was refused","reasons":[{"code":"no-role","message":"editors only"}]}}`},
		{"refusal without reasons", nil, &admission.Refusal{},
			false, `{"error":{"reason":"refused","message":"the call was refused"}}`},
		{"missing", nil, fmt.Errorf("bridge: %w", ErrMissing),
			false, `{"error":{"reason":"missing","message":"nothing here answers m"}}`},
		{"failure for the client", nil, fmt.Errorf("module: %w", &Failure{Message: "the quota is used up", Reasons: []admission.Reason{{Code: "quota", Message: "10 of 10"}, {Code: ""}}}),
			false, `{"error":{"reason":"failed","message":"the quota is used up","reasons":[{"code":"quota","message":"10 of 10"}]}}`},
		{"failure without a message", nil, &Failure{},
			false, `{"error":{"reason":"failed","message":"the call failed"}}`},
		{"internal error", nil, errors.New("pq: password authentication failed for user admin"),
			false, `{"error":{"reason":"failed","message":"the call failed"}}`},
		{"own deadline", nil, context.DeadlineExceeded,
			false, `{"error":{"reason":"failed","message":"the call failed"}}`},
		{"result not json", json.RawMessage(`{"a":`), nil,
			false, `{"error":{"reason":"not-data","message":"the result could not be encoded as JSON"}}`},
		{"not-data error", nil, ErrNotData,
			false, `{"error":{"reason":"not-data","message":"the result could not be encoded as JSON"}}`},
		{"panic", nil, nil,
			true, `{"error":{"reason":"failed","message":"the call failed"}}`},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, s := ready(t, CallsFunc(func(context.Context, Call, func(json.RawMessage)) (json.RawMessage, error) {
				if tc.panic {
					panic("module bug")
				}
				return tc.result, tc.err
			}), Config{})
			receive(t, c, fmt.Sprintf(`{"id":%d,"name":"m"}`, i))
			s.want(t, fmt.Sprintf(`{"id":%d,`, i)+tc.want[1:])
		})
	}
}

// blocking is a Calls whose calls wait for a release per id, or for ctx.
type blocking struct {
	started chan int64
	release sync.Map // id -> chan struct{}
}

func newBlocking() *blocking { return &blocking{started: make(chan int64, 64)} }

func (b *blocking) gate(id int64) chan struct{} {
	ch, _ := b.release.LoadOrStore(id, make(chan struct{}))
	return ch.(chan struct{})
}

func (b *blocking) Call(ctx context.Context, c Call, _ func(json.RawMessage)) (json.RawMessage, error) {
	b.started <- c.ID
	select {
	case <-b.gate(c.ID):
		return json.RawMessage(fmt.Sprint(c.ID)), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func TestAnswersInAnyOrder(t *testing.T) {
	b := newBlocking()
	c, s := ready(t, b, Config{})
	receive(t, c, `{"id":1,"name":"x"}`)
	receive(t, c, `{"id":2,"name":"x"}`)
	wait(t, b.started)
	wait(t, b.started)
	close(b.gate(2))
	s.want(t, `{"id":2,"result":2}`)
	close(b.gate(1))
	s.want(t, `{"id":1,"result":1}`)
}

func TestConcurrencyBound(t *testing.T) {
	b := newBlocking()
	c, s := ready(t, b, Config{MaxInFlight: 2})
	receive(t, c, `{"id":1,"name":"x"}`)
	receive(t, c, `{"id":2,"name":"x"}`)
	wait(t, b.started)
	wait(t, b.started)
	// The third is answered busy at once, and never reaches Calls.
	receive(t, c, `{"id":3,"name":"x"}`)
	s.want(t, `{"id":3,"error":{"reason":"busy","message":"too many calls in flight on this socket"}}`)
	close(b.gate(1))
	s.want(t, `{"id":1,"result":1}`)
	// Once an answer is out, a slot is free again.
	receive(t, c, `{"id":4,"name":"x"}`)
	if id := wait(t, b.started); id != 4 {
		t.Fatalf("started %d, want 4", id)
	}
	close(b.gate(2))
	s.want(t, `{"id":2,"result":2}`)
	close(b.gate(4))
	s.want(t, `{"id":4,"result":4}`)
}

func TestNothingRunsBeforeReady(t *testing.T) {
	b := newBlocking()
	s := newSink()
	c := New(context.Background(), b, caller, s.send, Config{MaxInFlight: 2})
	defer c.Close()
	receive(t, c, `{"id":1,"name":"x"}`)
	receive(t, c, `{"id":2,"name":"x"}`)
	receive(t, c, `{"id":3,"name":"x"}`)
	// Held requests count against the bound; busy is answered at once.
	s.want(t, `{"id":3,"error":{"reason":"busy","message":"too many calls in flight on this socket"}}`)
	c.mu.Lock()
	held, inFlight := len(c.held), c.inFlight
	c.mu.Unlock()
	if held != 2 || inFlight != 2 || len(b.started) != 0 {
		t.Fatalf("held %d in flight %d started %d before Ready", held, inFlight, len(b.started))
	}
	c.Ready()
	c.Ready() // idempotent
	got := []int64{wait(t, b.started), wait(t, b.started)}
	if got[0]+got[1] != 3 {
		t.Fatalf("started %v", got)
	}
	close(b.gate(1))
	close(b.gate(2))
	a, z := s.next(t), s.next(t)
	if a+z != `{"id":1,"result":1}{"id":2,"result":2}` && a+z != `{"id":2,"result":2}{"id":1,"result":1}` {
		t.Fatalf("answers %s %s", a, z)
	}
}

func TestAnswersFromTheClientAreDropped(t *testing.T) {
	b := newBlocking()
	c, s := ready(t, b, Config{})
	for _, m := range []string{`{"id":1,"result":1}`, `{"id":1,"progress":1}`, `{"id":1,"error":{"reason":"x","message":"y"}}`} {
		receive(t, c, m)
	}
	c.Close()
	if len(s.all()) != 0 || len(b.started) != 0 {
		t.Fatalf("answers caused %q and %d calls", s.all(), len(b.started))
	}
}

func TestHandleViolations(t *testing.T) {
	c, s := ready(t, nil, Config{MaxMessageBytes: 64})
	for _, m := range []string{`nope`, `[]`, `{"name":"x"}`, `{"id":"1","name":"x"}`, `{"id":1}`,
		`{"id":1,"name":"` + strings.Repeat("x", 64) + `"}`} {
		if err := c.Handle([]byte(m)); !errors.Is(err, ErrViolation) {
			t.Errorf("Handle(%.20s): %v, want a violation", m, err)
		}
	}
	var v *Violation
	if err := c.Handle(make([]byte, 65)); !errors.As(err, &v) || v.Kind != TooLarge {
		t.Fatalf("65 bytes: %v, want too-large", err)
	}
	c.Close()
	if len(s.all()) != 0 {
		t.Fatalf("violations were answered: %q", s.all())
	}
}

func TestCloseWithCallsInFlight(t *testing.T) {
	b := newBlocking()
	s := newSink()
	c := New(context.Background(), b, caller, s.send, Config{})
	c.Ready()
	for i := 1; i <= 5; i++ {
		receive(t, c, fmt.Sprintf(`{"id":%d,"name":"x"}`, i))
	}
	for i := 0; i < 5; i++ {
		wait(t, b.started)
	}
	c.Close() // returns only once all five calls have
	c.Close()
	if len(s.all()) != 0 {
		t.Fatalf("answers after close: %q", s.all())
	}
	if err := c.Handle([]byte(`{"id":6,"name":"x"}`)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Handle after Close: %v", err)
	}
	if len(b.started) != 0 {
		t.Fatal("a call started after Close")
	}
}

func TestCloseDropsHeldCalls(t *testing.T) {
	b := newBlocking()
	s := newSink()
	c := New(context.Background(), b, caller, s.send, Config{})
	receive(t, c, `{"id":1,"name":"x"}`)
	c.Close()
	c.Ready()
	if len(b.started) != 0 || len(s.all()) != 0 {
		t.Fatalf("held call ran after Close: %d started, sent %q", len(b.started), s.all())
	}
}

func TestParentContextEndsCalls(t *testing.T) {
	b := newBlocking()
	s := newSink()
	ctx, cancel := context.WithCancel(context.Background())
	c := New(ctx, b, caller, s.send, Config{})
	defer c.Close()
	c.Ready()
	receive(t, c, `{"id":1,"name":"x"}`)
	wait(t, b.started)
	cancel()
	c.Close()
	if len(s.all()) != 0 {
		t.Fatalf("answered a call whose socket ended: %q", s.all())
	}
}

func TestSendErrorIsSurvived(t *testing.T) {
	tried := make(chan string, 4)
	c := New(context.Background(), nil, caller, func(b []byte) error {
		tried <- string(b)
		return errors.New("queue full")
	}, Config{})
	c.Ready()
	receive(t, c, `{"id":1,"name":"x"}`)
	wait(t, tried)
	// The channel carries on: the next call is answered too.
	receive(t, c, `{"id":2,"name":"x"}`)
	if got := wait(t, tried); !strings.HasPrefix(got, `{"id":2,`) {
		t.Fatalf("second answer %s", got)
	}
	c.Close()
}

// Many writers and a Close racing them: run under -race, nothing may leak
// (goleak in TestMain) or send after Close.
func TestConcurrentHandleAndClose(t *testing.T) {
	s := newSink()
	var closed sync.WaitGroup
	var afterClose sync.Mutex
	isClosed := false
	send := func(b []byte) error {
		afterClose.Lock()
		defer afterClose.Unlock()
		if isClosed {
			t.Error("sent after Close returned")
		}
		return s.send(b)
	}
	c := New(context.Background(), Handler(func(ctx context.Context, call Call, r Responder) (any, error) {
		_ = r.Progress(call.ID)
		return call.ID, nil
	}), caller, send, Config{MaxInFlight: 4})
	c.Ready()
	for w := 0; w < 4; w++ {
		closed.Add(1)
		go func(w int) {
			defer closed.Done()
			for i := 0; i < 200; i++ {
				err := c.Handle(fmt.Appendf(nil, `{"id":%d,"name":"x"}`, w*1000+i))
				if err != nil && !errors.Is(err, ErrClosed) {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	go func() {
		for range s.ch { // keep the sink drained
		}
	}()
	c.Close()
	afterClose.Lock()
	isClosed = true
	afterClose.Unlock()
	closed.Wait()
	close(s.ch)
}
