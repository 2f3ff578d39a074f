package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/weftgate/weftgate/bridge/client"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// Example runs the quick start against a gateway on its defaults with
// examples/authority beside it. In a program of your own it is main.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := quickstart(ctx, os.Stdout, "ws://127.0.0.1:8080/", "127.0.0.1:9090"); err != nil {
		log.Fatal(err)
	}
}

// quickstart plays a browser and a backend against a gateway that
// examples/authority judges, and prints what each sees.
func quickstart(ctx context.Context, out io.Writer, wsURL, grpcAddr string) error {
	p, err := peer.Dial(ctx, wsURL, peer.Options{}) // the browser's end of the link
	if err != nil {
		return err
	}
	defer p.Close()
	root := commit.NewID()
	name := "quickstart-" + root.String() // a new document on every run
	d, err := p.Share(ctx, name, document.New(root, commit.Object, document.Limits{}))
	if err != nil {
		return err
	}
	for _, key := range []string{"title", "admin"} { // the authority protects /admin
		if _, err := d.Commit(commit.Delta{Op: commit.Add, ID: root, Ref: commit.ObjectKey(key), Value: commit.TextValue("me")}); err != nil {
			return err
		}
	}
	select { // the gateway answers only refusals
	case ev := <-d.Events():
		r, ok := ev.(peer.Refused)
		if !ok {
			return fmt.Errorf("no verdict: %+v", ev)
		}
		fmt.Fprintf(out, "refused: %+v\n", r.Reasons)
	case <-ctx.Done():
		return ctx.Err()
	}
	c, err := client.Dial(ctx, grpcAddr, client.Options{Backend: "quickstart"})
	if err != nil {
		return err
	}
	defer c.Close()
	seen := errors.New("seen") // stops the subscription after one commit
	err = c.Subscribe(ctx, name, 0, func(ev client.Event) error {
		fmt.Fprintln(out, ev.Kind, ev.Cursor, ev.Paths)
		return seen
	})
	if errors.Is(err, seen) {
		return nil
	}
	return err
}
