package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/weftgate/weftgate/bridge/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "authority:", err)
		stop()
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	Gateway  string
	Token    string
	TLS      bool
	CA       string
	Name     string
	Prefix   string
	Data     string
	Sessions string
	Wait     time.Duration
	Rules    Rules
}

func parse(args []string, getenv func(string) string, out io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("authority", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.Gateway, "gateway", "127.0.0.1:9090", "the gateway's gRPC `address`")
	fs.StringVar(&c.Token, "token", "", "bearer `token` for the gateway; prefer $WEFTGATE_GRPC_TOKEN, which it defaults to")
	fs.BoolVar(&c.TLS, "tls", false, "dial with TLS, trusting the system's roots")
	fs.StringVar(&c.CA, "tls-ca", "", "PEM `file` of a CA to trust instead (implies -tls)")
	fs.StringVar(&c.Name, "name", "example-authority", "this backend's `name` in the gateway's logs")
	fs.StringVar(&c.Prefix, "prefix", "", "claim documents whose names start with `text` (empty: every document)")
	fs.StringVar(&c.Data, "data", "authority-data", "`directory` the documents are kept in")
	fs.DurationVar(&c.Wait, "dial-timeout", 30*time.Second, "how long to wait for the gateway at start (0: for ever)")
	fs.StringVar(&c.Sessions, "sessions", "", "JSON `file` of session cookie → {id, roles}; without it peers are anonymous")
	protect := fs.String("protect", "/admin", "`path` only peers with -role may write under (empty: none)")
	fs.StringVar(&c.Rules.Role, "role", "admin", "the `role` that may write under -protect")
	fs.IntVar(&c.Rules.MaxValueBytes, "max-value-bytes", 64<<10, "refuse text and byte values over `n` bytes (0: no bound)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.Token == "" {
		c.Token = getenv("WEFTGATE_GRPC_TOKEN") // not a flag default: -h would print it
	}
	if p := strings.Trim(*protect, "/"); p != "" {
		c.Rules.Protected = strings.Split(p, "/")
	}
	if c.Rules.MaxValueBytes < 0 {
		return c, errors.New("-max-value-bytes is negative")
	}
	if c.Data == "" {
		return c, errors.New("-data is empty")
	}
	return c, nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	c, err := parse(args, getenv, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	return serve(ctx, c, log, hooks{})
}

// hooks let tests see the authority's progress; both may be nil.
type hooks struct {
	ready func(*client.Client)             // the claims are in force
	saved func(name string, cursor uint64) // a document's file was written
}

// serve runs the authority until ctx ends.
func serve(ctx context.Context, c config, log *slog.Logger, h hooks) error {
	if err := os.MkdirAll(c.Data, 0o755); err != nil {
		return err
	}
	store := dirStore{dir: c.Data}
	cursors, err := store.Cursors()
	if err != nil {
		return err
	}
	var who sessions
	if c.Sessions != "" {
		if who, err = loadSessions(c.Sessions); err != nil {
			return err
		}
	}
	opts := client.Options{Backend: c.Name, Token: c.Token, Logger: log}
	if c.TLS || c.CA != "" {
		if opts.TLS, err = tlsConfig(c.CA); err != nil {
			return err
		}
	}
	log.Info("dialing the gateway", "gateway", c.Gateway)
	dctx, cancel := ctx, context.CancelFunc(func() {})
	if c.Wait > 0 {
		dctx, cancel = context.WithTimeout(ctx, c.Wait)
	}
	cl, err := client.Dial(dctx, c.Gateway, opts)
	cancel()
	if err != nil {
		return err
	}
	defer cl.Close()

	docs := client.Handlers{
		Accept: c.Rules.Accept,
		Load: func(_ context.Context, q client.LoadQuestion) (*client.Loaded, error) {
			return store.Load(q.Document)
		},
		// Every peer may open a claimed document (and create one): the
		// rules judge what it writes. Change this to gate reading.
		MayOpen: func(context.Context, client.MayOpenQuestion) ([]client.Reason, error) { return nil, nil },
	}
	if _, err := cl.Claim(ctx, client.Prefix(c.Prefix), docs); err != nil {
		return err
	}
	if who != nil {
		if _, err := cl.Claim(ctx, client.Prefix("/"), client.Handlers{Identify: who.Identify}); err != nil {
			return err
		}
	}
	m := newMirror(store, log, cl.GetState)
	m.saved = h.saved
	if err := m.preload(cursors); err != nil {
		return err
	}
	log.Info("claimed", "prefix", c.Prefix, "data", c.Data, "documents", len(cursors))
	if h.ready != nil {
		h.ready(cl)
	}
	err = cl.SubscribePattern(ctx, client.Prefix(c.Prefix), client.SubscribeOptions{Resume: cursors, Snapshot: true},
		func(ev client.Event) error { return m.Event(ctx, ev) })
	if ctx.Err() != nil {
		return nil // asked to stop
	}
	return err
}

func tlsConfig(caFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	cfg.RootCAs = pool
	return cfg, nil
}
