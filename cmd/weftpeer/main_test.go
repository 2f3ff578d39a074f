package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// guard bounds every blocking step, so a bug fails instead of hanging.
const guard = 10 * time.Second

var root = commit.ID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}

// adminIsReadOnly refuses every write under /admin, as an authority would.
type adminIsReadOnly struct{}

func (adminIsReadOnly) Judge(req *gateway.AcceptRequest, reply func(gateway.Verdict)) {
	var v gateway.Verdict
	for _, p := range req.Paths {
		if len(p) > 0 && p[0] == "admin" {
			v.Reasons = append(v.Reasons, frame.Reason{Code: "forbidden", Message: "admin is read-only", Path: p})
		}
	}
	reply(v)
}

func (adminIsReadOnly) MayOpen(_ gateway.OpenRequest, reply func(error)) { reply(nil) }

// startGateway serves a gateway on 127.0.0.1 and returns its WebSocket URL.
func startGateway(t *testing.T) (string, *gateway.Server) {
	t.Helper()
	s, err := gateway.New(gateway.Config{PingInterval: -1, Authority: adminIsReadOnly{}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		s.Shutdown(ctx)
		hs.Close()
	})
	return "ws" + strings.TrimPrefix(hs.URL, "http") + "/", s
}

func set(key string, v commit.Value) commit.Delta {
	return commit.Delta{Op: commit.Add, ID: root, Ref: commit.ObjectKey(key), Value: v}
}

// seed shares "board" holding {"title": "plan"} and returns its Doc, whose
// peer stays connected for the test.
func seed(t *testing.T, url string) *peer.Doc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	p, err := peer.Dial(ctx, url, peer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	doc := document.New(root, commit.Object, document.Limits{})
	if _, err := doc.Apply(commit.Commit{Deltas: []commit.Delta{set("title", commit.TextValue("plan"))}}); err != nil {
		t.Fatal(err)
	}
	d, err := p.Share(ctx, "board", doc)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// weftpeer runs the command's main logic and returns its exit code, its
// standard output and its standard error.
func weftpeer(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// readState parses a printed state and returns it as the fixtures' JSON,
// canonical, for comparing.
func readState(t *testing.T, printed string) string {
	t.Helper()
	if strings.Count(printed, "\n") != 1 || !strings.HasSuffix(printed, "\n") {
		t.Fatalf("want one line of JSON, got %q", printed)
	}
	d, err := document.ParseJSON([]byte(printed), document.Limits{})
	if err != nil {
		t.Fatalf("the state %q does not parse: %v", printed, err)
	}
	b, err := d.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func stateOf(t *testing.T, ds ...commit.Delta) string {
	t.Helper()
	d := document.New(root, commit.Object, document.Limits{})
	if _, err := d.Apply(commit.Commit{Deltas: ds}); err != nil {
		t.Fatal(err)
	}
	b, err := d.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadPrintsTheState(t *testing.T) {
	url, _ := startGateway(t)
	seed(t, url)
	code, out, errs := weftpeer(t, url, "board")
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if got, want := readState(t, out), stateOf(t, set("title", commit.TextValue("plan"))); got != want {
		t.Fatalf("printed %s, want %s", got, want)
	}
}

// -create makes an empty document only where there is none; its printed
// root is what a later -write names.
func TestCreate(t *testing.T) {
	url, _ := startGateway(t)
	code, out, errs := weftpeer(t, "-create", "map", url, "fresh")
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	d, err := document.ParseJSON([]byte(out), document.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	id, kind := d.Root()
	if kind != commit.Map || len(d.Snapshot().Deltas) != 0 {
		t.Fatalf("created %s", out)
	}
	key := commit.NewID()
	w := fmt.Sprintf(`{"type":"add","id":%q,"ref":{"kind":"map","key":%q},"value":true}`, id, key)
	if code, out, errs = weftpeer(t, "-write", w, url, "fresh"); code != exitOK {
		t.Fatalf("writing into the created document: exit %d, stderr %q", code, errs)
	}
	// A second -create opens what is there.
	code, again, _ := weftpeer(t, "-create", "object", url, "fresh")
	if code != exitOK || again != out || !strings.Contains(again, key.String()) {
		t.Fatalf("a second -create printed %q, want %q", again, out)
	}
	seed(t, url)
	if code, out, _ := weftpeer(t, "-create", "object", url, "board"); code != exitOK || readState(t, out) != stateOf(t, set("title", commit.TextValue("plan"))) {
		t.Fatalf("-create on an existing document: exit %d, %q", code, out)
	}
}

func TestWriteAccepted(t *testing.T) {
	url, _ := startGateway(t)
	d := seed(t, url)
	w := fmt.Sprintf(`{"type":"add","id":%q,"ref":{"kind":"object","key":"note"},"value":"hi"}`, root)
	code, out, errs := weftpeer(t, "-write", w, url, "board")
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	want := stateOf(t, set("title", commit.TextValue("plan")), set("note", commit.TextValue("hi")))
	if got := readState(t, out); got != want {
		t.Fatalf("printed %s after the write, want %s", got, want)
	}
	// Applied at the gateway: the other member got it, and a new reader sees it.
	select {
	case ev := <-d.Events():
		if a, ok := ev.(peer.Applied); !ok || len(a.Commit.Deltas) != 1 || a.Commit.Deltas[0].Ref.Key != "note" {
			t.Fatalf("the other member got %#v", ev)
		}
	case <-time.After(guard):
		t.Fatal("the other member did not get the write")
	}
	if _, out, _ := weftpeer(t, url, "board"); readState(t, out) != want {
		t.Fatalf("read back %s", out)
	}
}

func TestWriteRefused(t *testing.T) {
	url, _ := startGateway(t)
	seed(t, url)
	w := fmt.Sprintf(`{"deltas":[{"type":"add","id":%q,"ref":{"kind":"object","key":"admin"},"value":"me"}]}`, root)
	code, out, errs := weftpeer(t, "-write", w, url, "board")
	if code != exitRefused || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	if errs != "weftpeer: refused: the gateway refused the commit\n  forbidden: admin is read-only at /admin\n" {
		t.Fatalf("stderr %q", errs)
	}
	if _, out, _ := weftpeer(t, url, "board"); readState(t, out) != stateOf(t, set("title", commit.TextValue("plan"))) {
		t.Fatalf("read back %s", out)
	}

	// A commit the document refuses as it stands never reaches the gateway.
	w = fmt.Sprintf(`[{"type":"add","id":%q,"ref":{"kind":"object","key":"title"},"value":"again"}]`, root)
	code, _, errs = weftpeer(t, "-write", w, url, "board")
	if code != exitRefused || !strings.HasPrefix(errs, "weftpeer: refused: the document refuses the commit as it stands\n  slot-exists") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

func TestFollowPrintsEachCommitOnce(t *testing.T) {
	url, _ := startGateway(t)
	d := seed(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var errb bytes.Buffer
	exited := make(chan int, 1)
	go func() {
		code := run(ctx, []string{url, "board", "-follow"}, pw, &errb)
		pw.Close()
		exited <- code
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("output ended; stderr %q", errb.String())
			}
			return l
		case <-time.After(guard):
			t.Fatal("no line")
			return ""
		}
	}
	if got, want := readState(t, next()+"\n"), stateOf(t, set("title", commit.TextValue("plan"))); got != want {
		t.Fatalf("first line %s, want %s", got, want)
	}
	for i := range 3 {
		if _, err := d.Commit(set(fmt.Sprint("k", i), commit.IntValue(int64(i)))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		var c commit.Commit
		l := next()
		if err := c.UnmarshalJSON([]byte(l)); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if len(c.Deltas) != 1 || c.Deltas[0] != set(fmt.Sprint("k", i), commit.IntValue(int64(i))) {
			t.Fatalf("line %d is %s", i, l)
		}
	}
	cancel()
	select {
	case code := <-exited:
		if code != exitOK {
			t.Fatalf("interrupted -follow exited %d: %s", code, errb.String())
		}
	case <-time.After(guard):
		t.Fatal("-follow did not stop when interrupted")
	}
	if l, ok := <-lines; ok {
		t.Fatalf("an extra line %q", l)
	}
}

// The gateway going away ends -follow with a named error.
func TestFollowEndsWithTheGateway(t *testing.T) {
	url, s := startGateway(t)
	seed(t, url)
	pr, pw := io.Pipe()
	var errb bytes.Buffer
	exited := make(chan int, 1)
	go func() {
		code := run(context.Background(), []string{"-follow", url, "board"}, pw, &errb)
		pw.Close()
		exited <- code
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatal("no state")
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		t.Errorf("an extra line %q", sc.Text())
	}
	if code := <-exited; code != exitFailed || !strings.HasPrefix(errb.String(), "weftpeer: ended: ") || !strings.Contains(errb.String(), "shutdown") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

func TestBadInput(t *testing.T) {
	url, _ := startGateway(t)
	seed(t, url)
	// A port nothing listens on, a server that answers 403, and one that
	// accepts connections and never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "ws://" + l.Addr().String() + "/"
	l.Close()
	forbid := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no entry", http.StatusForbidden)
	}))
	defer forbid.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	id := root.String()
	for _, tc := range []struct {
		args []string
		exit int
		want string // the start of standard error
	}{
		{[]string{url}, exitUsage, "usage: weftpeer"},
		{[]string{"http://127.0.0.1:1/", "board"}, exitUsage, "weftpeer: bad-url: "},
		{[]string{"127.0.0.1:8080", "board"}, exitUsage, "weftpeer: bad-url: "},
		{[]string{"ws://", "board"}, exitUsage, "weftpeer: bad-url: "},
		{[]string{url, ""}, exitUsage, "weftpeer: bad-name: "},
		{[]string{"-timeout", "0", url, "board"}, exitUsage, "weftpeer: usage: -timeout must be positive"},
		{[]string{"-create", "list", url, "board"}, exitUsage, `weftpeer: usage: -create "list": want object, array or map`},
		{[]string{"-header", "nocolon", url, "board"}, exitUsage, "invalid value"},
		{[]string{"-write", "title=plan", url, "board"}, exitUsage, "weftpeer: bad-commit: -write: want a JSON delta"},
		{[]string{"-write", `{"op":"add","id":"` + id + `"}`, url, "board"}, exitUsage, `weftpeer: bad-commit: -write: a delta names its operation "type"`},
		{[]string{"-write", `{"type":"add","id":"` + id + `","ref":{"kind":"object","key":"x"}}`, url, "board"}, exitUsage, "weftpeer: bad-commit: -write: "},
		{[]string{"-write", `{"deltas":[]}`, url, "board"}, exitUsage, "weftpeer: bad-commit: -write: "},
		{[]string{"-write", `{"type":"add","id":"short","ref":{"kind":"object","key":"x"},"value":1}`, url, "board"}, exitUsage, "weftpeer: bad-commit: -write: "},
		{[]string{url, "nothing-here"}, exitFailed, `weftpeer: no-document: the gateway holds no document "nothing-here"`},
		{[]string{closed, "board"}, exitFailed, "weftpeer: connect-failed: "},
		{[]string{"ws" + strings.TrimPrefix(forbid.URL, "http"), "board"}, exitFailed, "weftpeer: handshake-refused: "},
		{[]string{"-timeout", "200ms", "ws://" + silent.Addr().String() + "/", "board"}, exitFailed, "weftpeer: timeout: no answer within -timeout 200ms"},
	} {
		code, out, errs := weftpeer(t, tc.args...)
		if code != tc.exit || out != "" || !strings.Contains(errs, tc.want) || !strings.HasSuffix(errs, "\n") {
			t.Errorf("weftpeer %q: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, out, errs, tc.exit, tc.want)
		}
	}
}
