package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/weftgate/weftgate/internal/gcfloor"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailed   = 1 // a failure while running, or a drain past its deadline
	exitSettings = 2 // a setting that cannot work, or bad usage
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is the whole process minus os.Exit, so tests can call it.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	} else if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		cmd, args = "version", args[1:]
	}
	switch cmd {
	case "version":
		if len(args) > 0 {
			fmt.Fprintf(stderr, "gateway: version takes no arguments (got %q)\n", args[0])
			return exitSettings
		}
		fmt.Fprintln(stdout, versionLine())
		return exitOK
	case "help":
		args = []string{"-h"}
	case "serve", "config":
	default:
		fmt.Fprintf(stderr, "gateway: unknown command %q (serve, config, version, help)\n", cmd)
		return exitSettings
	}

	p, err := parseSettings(args, getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return settingsFailed(stderr, err)
	}
	res, err := p.validate()
	if err != nil {
		return settingsFailed(stderr, err)
	}
	if cmd == "config" {
		// What a start checks before it binds: the data directory too.
		if err := p.checkDataDir(); err != nil {
			return settingsFailed(stderr, err)
		}
		if err := p.printEffective(stdout); err != nil {
			fmt.Fprintf(stderr, "gateway: %v\n", err)
			return exitFailed
		}
		return exitOK
	}

	log := newLogger(stderr, p.s.LogFormat, res.logLevel)
	log.Info("settings", p.logAttrs()...)
	if !gcfloor.Set(uint64(p.s.GCFloor), getenv) && p.s.GCFloor > 0 {
		log.Info("GOGC is set, so -gc-floor is not applied", "GOGC", getenv("GOGC"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err = serve(ctx, p, res, log, stop)
	var se *settingError
	switch {
	case errors.As(err, &se):
		return settingsFailed(stderr, err)
	case err != nil:
		log.Error("gateway stopped", "err", err)
		return exitFailed
	}
	return exitOK
}

func settingsFailed(w io.Writer, err error) int {
	fmt.Fprintf(w, "gateway: %v\nRun 'gateway -h' to list the settings.\n", err)
	return exitSettings
}
