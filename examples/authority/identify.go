package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	"github.com/weftgate/weftgate/bridge/client"
)

// ReasonUnknownSession refuses a handshake whose session cookie is not in
// the sessions file.
const ReasonUnknownSession = "unknown-session"

// sessions maps a session cookie's value to who it is.
type sessions map[string]client.Identity

type sessionJSON struct {
	ID    string   `json:"id"`
	Roles []string `json:"roles"`
}

// loadSessions reads {"<cookie value>": {"id": ..., "roles": [...]}}.
func loadSessions(path string) (sessions, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw map[string]sessionJSON
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make(sessions, len(raw))
	for k, v := range raw {
		if v.ID == "" {
			return nil, fmt.Errorf("%s: a session with no id", path)
		}
		out[k] = client.Identity{ID: v.ID, Roles: v.Roles}
	}
	return out, nil
}

// Identify admits a peer without a session cookie as anonymous, one with a
// known session as its identity, and refuses an unknown session.
func (s sessions) Identify(_ context.Context, q client.IdentifyQuestion) (*client.Identity, []client.Reason, error) {
	c, err := (&http.Request{Header: q.Handshake.Header}).Cookie("session")
	if err != nil {
		return nil, nil, nil
	}
	who, ok := s[c.Value]
	if !ok {
		return nil, []client.Reason{client.Refuse(ReasonUnknownSession, "the session cookie names no session")}, nil
	}
	return &who, nil, nil
}
