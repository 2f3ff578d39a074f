package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/bridge/client"
	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/protocol/commit"
)

// A backend that claims the documents named board:… and refuses every
// write under /admin, whoever makes it.
func Example() {
	gw, err := startLocal(bridge.Config{}, gateway.Config{}) // a gateway on 127.0.0.1
	if err != nil {
		log.Fatal(err)
	}
	defer gw.stop()
	ctx := context.Background()

	c, err := client.Dial(ctx, gw.addr, client.Options{Backend: "rules"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	_, err = c.Claim(ctx, client.Prefix("board:"), client.Handlers{
		Accept: func(ctx context.Context, q client.AcceptQuestion) ([]client.Reason, error) {
			var refused []client.Reason
			for _, i := range q.Under("admin") {
				refused = append(refused, client.Refuse("forbidden", "admin is read-only", q.Paths[i]...))
			}
			return refused, nil // none: accepted
		},
	})
	if err != nil {
		log.Fatal(err)
	}

	// Browsers' commits are judged by it, and so is this write.
	root := client.Root{ID: commit.NewID(), Kind: commit.Object}
	r, err := c.WriteCommit(ctx, "board:1", commit.Commit{Deltas: []commit.Delta{
		{Op: commit.Add, ID: root.ID, Ref: commit.ObjectKey("admin"), Value: commit.TextValue("me")},
	}}, client.WriteOptions{CreateRoot: &root})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Status, r.Reasons)
	// Output: refused [forbidden: admin is read-only at /admin]
}
