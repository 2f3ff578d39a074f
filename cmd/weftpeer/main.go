package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/weftgate/weftgate/protocol/commit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes.
const (
	exitOK      = 0
	exitFailed  = 1 // no answer, no such document, the link ended, ...
	exitUsage   = 2 // bad flags, URL or JSON
	exitRefused = 3 // the commit was refused; the reasons are printed
)

// config is the command line.
type config struct {
	URL     string
	Name    string
	Follow  bool
	Write   string
	Timeout time.Duration
	Header  http.Header
	Create  *commit.Kind // nil: open only a document the gateway has
}

// headers is a repeatable -header 'Name: value'.
type headers http.Header

func (h headers) String() string { return "" }

func (h headers) Set(s string) error {
	k, v, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("%q is not Name: value", s)
	}
	http.Header(h).Add(strings.TrimSpace(k), strings.TrimSpace(v))
	return nil
}

func parse(args []string, stderr io.Writer) (config, error) {
	c := config{Header: http.Header{}}
	fs := flag.NewFlagSet("weftpeer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: weftpeer [flags] URL DOCUMENT")
		fmt.Fprintln(stderr, "Prints the document's state as JSON; -follow then prints each commit, -write writes one.")
		fs.PrintDefaults()
	}
	fs.BoolVar(&c.Follow, "follow", false, "after the state, print each commit as one JSON line until interrupted")
	fs.StringVar(&c.Write, "write", "", "write one commit, given as `JSON`: a delta, an array of deltas, or {\"deltas\": [...]}")
	fs.DurationVar(&c.Timeout, "timeout", 10*time.Second, "bound on connecting, opening the document and a write's verdict")
	create := fs.String("create", "", "when the gateway holds no such document, create it empty with a new root of `kind` (object, array or map)")
	fs.Var(headers(c.Header), "header", "`Name: value` sent with the handshake (a session cookie, an Origin); repeatable")
	// Flags may come before, between or after the two arguments.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return c, err
		}
		if fs.NArg() == 0 {
			break
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	if len(pos) != 2 {
		fs.Usage()
		return c, fmt.Errorf("want a URL and a document name, got %d arguments", len(pos))
	}
	c.URL, c.Name = pos[0], pos[1]
	if c.Timeout <= 0 {
		return c, errors.New("-timeout must be positive")
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return c, fail(codeBadURL, exitUsage, "%v", err)
	}
	if (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return c, fail(codeBadURL, exitUsage, "%q is not a ws:// or wss:// URL with a host", c.URL)
	}
	if c.Name == "" {
		return c, fail(codeBadName, exitUsage, "the document name is empty")
	}
	if *create != "" {
		k, err := commit.ParseKind(*create)
		if err != nil {
			return c, fail(codeUsage, exitUsage, "-create %q: want object, array or map", *create)
		}
		c.Create = &k
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parse(args, stderr)
	if err == nil {
		err = peerMain(ctx, c, stdout)
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err == nil {
		return exitOK
	}
	var f *failure
	if !errors.As(err, &f) {
		f = &failure{code: codeUsage, exit: exitUsage, msg: err.Error()}
	}
	fmt.Fprintf(stderr, "weftpeer: %s: %s\n", f.code, f.msg)
	for _, r := range f.reasons {
		fmt.Fprintf(stderr, "  %s\n", reasonText(r))
	}
	return f.exit
}
