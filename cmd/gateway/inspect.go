package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// maxCommitStreams bounds the /inspect/commits streams open at once, each
// holding a replica of its document; more get 503.
const maxCommitStreams = 8

// commitEvent is one commit as /inspect/commits gives it: its cursor, who
// made it, its deltas in the fixtures' JSON shape with each delta's path
// (nil: nothing reaches the target), and the document's size after it.
type commitEvent struct {
	Cursor      uint64         `json:"cursor"`
	Origin      string         `json:"origin"`
	Deltas      []commit.Delta `json:"deltas"`
	Paths       [][]string     `json:"paths"`
	Observables int            `json:"observables"`
	Slots       int            `json:"slots"`
}

// inspectCommits streams a document's commits from its current cursor on as
// Server-Sent Events (event "commit", data a commitEvent), for the
// inspector and for scripts: `curl -N 'http://ADDR/inspect/commits?doc=NAME'`.
func (a *app) inspectCommits(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("doc")
	if name == "" {
		plain(w, http.StatusBadRequest, "doc: the document's name is required")
		return
	}
	select {
	case a.commitStreams <- struct{}{}:
		defer func() { <-a.commitStreams }()
	default:
		plain(w, http.StatusServiceUnavailable, fmt.Sprintf("too-many-streams: %d commit streams are open", maxCommitStreams))
		return
	}
	ctx := r.Context()
	root, state, cursor, err := a.gw.State(ctx, name)
	if errors.Is(err, gateway.ErrNoDocument) {
		plain(w, http.StatusNotFound, "no-document: the gateway holds no such document")
		return
	} else if err != nil {
		plain(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	limits := document.Limits{MaxObservables: a.cfg.MaxObservables, MaxSlots: a.cfg.MaxSlots}
	replica := func(root commit.ID, kind commit.Kind, state []byte) (*document.Document, error) {
		d := document.New(root, kind, limits)
		if state == nil {
			return d, nil
		}
		c, err := commit.Decode(state)
		if err == nil {
			err = d.Update(c)
		}
		return d, err
	}
	doc, err := replica(root.ID, root.Kind, state)
	if err != nil {
		plain(w, http.StatusInternalServerError, "the document's state does not load: "+err.Error())
		return
	}
	flush := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintf(w, "event: open\ndata: {\"cursor\":%d}\n\n", cursor)
	if err := flush.Flush(); err != nil {
		return
	}
	err = a.gw.Subscribe(ctx, name, cursor, func(ev gateway.Event) error {
		if ev.Snapshot { // the store compacted past us: start again from its snapshot
			d, err := replica(ev.Root.ID, ev.Root.Kind, ev.State)
			if err != nil {
				return err
			}
			doc = d
			return nil
		}
		c, err := commit.Decode(ev.Commit)
		if err != nil {
			return err
		}
		out := commitEvent{Cursor: ev.Cursor, Origin: ev.Origin, Deltas: c.Deltas, Paths: doc.Paths(c)}
		if err := doc.Update(c); err != nil {
			return fmt.Errorf("commit %d does not apply to the replica: %w", ev.Cursor, err)
		}
		out.Observables, out.Slots = doc.Observables(), doc.Slots()
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "event: commit\ndata: %s\n\n", b); err != nil {
			return err
		}
		return flush.Flush()
	})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(w, "event: end\ndata: %q\n\n", err.Error())
		flush.Flush()
	}
}
