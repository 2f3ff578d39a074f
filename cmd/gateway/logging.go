package main

import (
	"io"
	"log/slog"
)

// newLogger builds the process logger. Nothing the binary logs carries a
// token, a cookie or a document value: settings go through the redacting
// effective view, and the gateway logs names and reasons only.
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(h)
}
