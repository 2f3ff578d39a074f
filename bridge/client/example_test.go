package client_test

import (
	"context"
	"log"
	"os"
	"time"
)

// The README's backend quick start, against a gateway on its defaults with
// examples/authority beside it. TestQuickstart runs the same code against
// an in-process gateway and checks what it prints.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := quickstart(ctx, os.Stdout, "ws://127.0.0.1:8080/", "127.0.0.1:9090"); err != nil {
		log.Fatal(err)
	}
}
