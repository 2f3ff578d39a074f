package main

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// documentPage is GET /documents/{name} on the admin listener: one
// document's durable state in the aweft fixtures' JSON shape, with its
// cursor and root.
type documentPage struct {
	Document string          `json:"document"`
	Cursor   uint64          `json:"cursor"`
	Root     rootJSON        `json:"root"`
	State    json.RawMessage `json:"state"`
}

type rootJSON struct {
	ID   commit.ID   `json:"id"`
	Kind commit.Kind `json:"kind"`
}

// documentView answers a document's state as GetState would give it (a
// backend that loads documents is asked for one the gateway does not hold):
// 404 when nobody has it, 503 when it could not be read in time.
func (a *app) documentView(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if name == "" || len(name) > store.MaxNameBytes {
		jsonError(w, http.StatusBadRequest, "bad-name", "a document name is 1 to 1024 bytes")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), statusTimeout)
	defer cancel()
	root, state, cursor, err := a.gw.State(ctx, name)
	switch {
	case protocol.ReasonOf(err) == protocol.NoDocument:
		jsonError(w, http.StatusNotFound, string(protocol.NoDocument), "no such document")
		return
	case err != nil:
		reason := string(protocol.ReasonOf(err))
		if reason == "" {
			reason = "unavailable"
		}
		jsonError(w, http.StatusServiceUnavailable, reason, err.Error())
		return
	}
	d := document.New(root.ID, root.Kind, a.gwLimits())
	if len(state) > 0 {
		st, err := commit.Decode(state)
		if err == nil {
			_, err = d.Reconcile(st)
		}
		if err != nil {
			jsonError(w, http.StatusInternalServerError, "internal", "the document's state does not decode")
			return
		}
	}
	view, err := d.MarshalJSON()
	if err != nil {
		jsonError(w, http.StatusInternalServerError, "internal", "the document does not print as JSON")
		return
	}
	writeJSON(w, http.StatusOK, documentPage{Document: name, Cursor: cursor, Root: rootJSON{ID: root.ID, Kind: root.Kind}, State: view})
}

// gwLimits are the document limits the gateway holds documents to, so any
// state it holds is read back.
func (a *app) gwLimits() document.Limits {
	return document.Limits{MaxObservables: a.cfg.MaxObservables, MaxSlots: a.cfg.MaxSlots}
}

func jsonError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]string{"error": code, "message": message})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
