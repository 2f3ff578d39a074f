package main

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/bridge/natsrelay"
	"github.com/weftgate/weftgate/gateway"
)

// maxStatusEntries bounds the documents and the links one status page
// lists; the totals are always given.
const maxStatusEntries = 1000

type statusPage struct {
	Version       string           `json:"version"`
	StartedAt     time.Time        `json:"started_at"`
	UptimeSeconds float64          `json:"uptime_seconds"`
	Draining      bool             `json:"draining"`
	Listeners     boundAddrs       `json:"listeners"`
	Store         storeStatus      `json:"store"`
	Authority     authorityStatus  `json:"authority"`
	Documents     []documentStatus `json:"documents"`
	DocumentsAll  int              `json:"documents_total"`
	Links         []linkStatus     `json:"links"`
	LinksAll      int              `json:"links_total"`
	Counters      counters         `json:"counters"`
	// Cluster is this node among the others on the same NATS log (only
	// with -nats-url).
	Cluster *clusterStatus `json:"cluster,omitempty"`
}

// clusterStatus: this node's id, whether its NATS connection is up, and
// the other live nodes it knows, with the claims their backends hold (the
// questions this node relays to them, decision 034).
type clusterStatus struct {
	Node      string           `json:"node"`
	Connected bool             `json:"nats_connected"`
	Nodes     []natsrelay.Node `json:"nodes"`
}

type storeStatus struct {
	Kind    string `json:"kind"`
	Healthy bool   `json:"healthy"`
	Error   string `json:"error,omitempty"`
}

// authorityStatus: the gRPC bridge judges every document, through the
// backends that claim it or its fallback policy. StreamsOpen and the
// question counters come from the bridge's router; Streams has one entry
// per backend: its state, last error and consecutive failures.
type authorityStatus struct {
	Kind        string `json:"kind"`
	ReadOnly    bool   `json:"read_only"`
	Fallback    string `json:"fallback"`
	StreamsOpen int64  `json:"streams_open"`
	Asked       uint64 `json:"questions_asked"`
	Reasked     uint64 `json:"questions_reasked"`
	TimedOut    uint64 `json:"questions_timed_out"`
	FellBack    uint64 `json:"questions_fell_back"`
	Ignored     uint64 `json:"answers_ignored"`
	// Unauthenticated is gRPC calls refused for their token.
	Unauthenticated uint64         `json:"grpc_unauthenticated"`
	Streams         []streamStatus `json:"streams"`
}

type streamStatus struct {
	Name                string `json:"name"`
	State               string `json:"state"`
	InFlight            int    `json:"questions_in_flight"`
	LastError           string `json:"last_error,omitempty"`
	ConsecutiveFailures int    `json:"consecutive_failures"`
	// Claims are the claims in force on the backend's streams: stream and
	// claim ids, the pattern and the question kinds.
	Claims []bridge.ClaimStatus `json:"claims"`
}

type documentStatus struct {
	Name              string `json:"name"`
	Cursor            uint64 `json:"cursor"`
	DurableCursor     uint64 `json:"durable_cursor"`
	Links             int    `json:"links"`
	Subscribers       int    `json:"subscribers"`
	Pending           int    `json:"pending_commits"`
	QuestionsInFlight int    `json:"questions_in_flight"`
	Observables       int    `json:"observables"`
	Slots             int    `json:"slots"`
	// Loading: its load from the store is under way; Following: this node
	// follows its shared log (several nodes).
	Loading   bool `json:"loading"`
	Following bool `json:"following"`
	// ClaimedBy names the backends whose claims match it.
	ClaimedBy []string `json:"claimed_by"`
	// Members: up to gateway.MaxStatusMembers of its links.
	Members []memberStatus `json:"members"`
}

type memberStatus struct {
	Link      string `json:"link"`
	Topic     uint64 `json:"topic"`
	Addr      string `json:"address"`
	Identity  string `json:"identity,omitempty"`
	Anonymous bool   `json:"anonymous"`
}

type linkStatus struct {
	// ID is what EndLinks takes as connection_id without the "c".
	ID string `json:"id"`
	// Addr is the peer's address (after a trusted proxy's
	// X-Forwarded-For); Identity is who the identifier said it is, never
	// its token or cookie; Documents are the names it has open.
	Addr          string         `json:"address"`
	Identity      identityStatus `json:"identity"`
	Documents     []string       `json:"documents"`
	QueueMessages int            `json:"queue_messages"`
	QueueBytes    int            `json:"queue_bytes"`
	LastPongAge   *float64       `json:"last_pong_age_seconds"` // null: no pong yet
}

type identityStatus struct {
	ID        string            `json:"id"`
	Anonymous bool              `json:"anonymous"`
	Roles     []string          `json:"roles"`
	Claims    map[string]string `json:"claims"`
}

type counters struct {
	Connections      int64 `json:"connections"`
	ConnectionsTotal int64 `json:"connections_total"`
	Received         int64 `json:"commits_received"`
	Applied          int64 `json:"commits_applied"`
	Delivered        int64 `json:"commits_delivered"`
	PeerRefusals     int64 `json:"peer_refusals"`
	SlowConsumerEnds int64 `json:"slow_consumer_ends"`
	// On a shared log (several nodes): appends that lost their cursor to
	// another node, catch-up reads, and other nodes' commits applied here.
	LogConflicts int64            `json:"log_conflicts"`
	LogCatchUps  int64            `json:"log_catch_ups"`
	LogForeign   int64            `json:"log_foreign_commits"`
	Refused      map[string]int64 `json:"refused_by_reason"`
	Faults       map[string]int64 `json:"faults_by_reason"`
	Handshakes   map[string]int64 `json:"handshake_refusals_by_reason"`
}

func (a *app) status(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), statusTimeout)
	defer cancel()
	now := time.Now()
	st := a.gw.Status(ctx)
	page := statusPage{
		Version:       buildVersion(),
		StartedAt:     a.started.UTC(),
		UptimeSeconds: now.Sub(a.started).Seconds(),
		Draining:      st.Draining || a.draining.Load(),
		Listeners:     a.addrs,
		Store:         storeStatus{Kind: a.cfg.Store},
		Authority:     a.authorityStatus(),
		Documents:     []documentStatus{},
		DocumentsAll:  len(st.Documents),
		Links:         []linkStatus{},
		LinksAll:      len(st.Links),
		Counters:      countersOf(a.gw.Metrics(), st),
	}
	if ns, ok := a.store.(natsStore); ok {
		page.Cluster = &clusterStatus{Node: ns.relay.ID(), Connected: ns.nc.IsConnected(), Nodes: ns.relay.Nodes()}
		if page.Cluster.Nodes == nil {
			page.Cluster.Nodes = []natsrelay.Node{}
		}
	}
	if err := a.store.Healthy(ctx); err != nil {
		page.Store.Error = err.Error()
	} else {
		page.Store.Healthy = true
	}
	for i, d := range st.Documents {
		if i == maxStatusEntries {
			break
		}
		ds := documentStatus{
			Name: d.Name, Cursor: d.Cursor, DurableCursor: d.Durable, Links: d.Links,
			Subscribers: d.Subscribers, Pending: d.Pending, QuestionsInFlight: d.InFlight,
			Observables: d.Observables, Slots: d.Slots, Loading: d.Loading, Following: d.Following, Members: []memberStatus{}, ClaimedBy: []string{},
		}
		if a.bridge != nil {
			ds.ClaimedBy = a.bridge.Claimants(d.Name)
		}
		for _, m := range d.Members {
			ds.Members = append(ds.Members, memberStatus{Link: m.Link, Topic: m.Topic, Addr: m.Addr, Identity: m.Identity.ID, Anonymous: m.Identity.Anonymous})
		}
		page.Documents = append(page.Documents, ds)
	}
	for i, l := range st.Links {
		if i == maxStatusEntries {
			break
		}
		ls := linkStatus{ID: l.ID, Addr: l.Addr, Documents: l.Documents, QueueMessages: l.QueueMessages, QueueBytes: l.QueueBytes,
			Identity: identityStatus{ID: l.Identity.ID, Anonymous: l.Identity.Anonymous, Roles: l.Identity.Roles, Claims: l.Identity.Claims}}
		if ls.Documents == nil {
			ls.Documents = []string{}
		}
		if ls.Identity.Roles == nil {
			ls.Identity.Roles = []string{}
		}
		if ls.Identity.Claims == nil {
			ls.Identity.Claims = map[string]string{}
		}
		if !l.LastPong.IsZero() {
			age := now.Sub(l.LastPong).Seconds()
			ls.LastPongAge = &age
		}
		page.Links = append(page.Links, ls)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(page)
}

func countersOf(m *gateway.Metrics, st gateway.Status) counters {
	c := counters{
		Connections:      m.Connections.Load(),
		ConnectionsTotal: m.ConnsTotal.Load(),
		Received:         m.Received.Load(),
		Applied:          m.Applied.Load(),
		Delivered:        m.Delivered.Load(),
		PeerRefusals:     m.PeerRefusals.Load(),
		SlowConsumerEnds: m.SlowConsumers.Load(),
		LogConflicts:     m.Conflicts.Load(),
		LogCatchUps:      m.CatchUps.Load(),
		LogForeign:       m.Foreign.Load(),
		Refused:          map[string]int64{},
		Faults:           map[string]int64{},
		Handshakes:       map[string]int64{},
	}
	for _, r := range withKnown(m.Refusals(), knownRefusals) {
		c.Refused[r.Reason] = r.N
	}
	for _, f := range withKnown(m.Faults(), knownFaults) {
		c.Faults[f.Reason] = f.N
	}
	for k, v := range st.Handshakes {
		c.Handshakes[k] = int64(v)
	}
	return c
}

func (a *app) authorityStatus() authorityStatus {
	st := authorityStatus{Kind: "bridge", ReadOnly: a.cfg.ReadOnly, Fallback: a.cfg.AuthorityFallback, Streams: []streamStatus{}}
	if a.bridge != nil {
		b := a.bridge.Stats()
		st.StreamsOpen = b.StreamsOpen.Load()
		st.Asked, st.Reasked, st.TimedOut = b.Asked.Load(), b.Reasked.Load(), b.TimedOut.Load()
		st.FellBack, st.Ignored = b.FellBack.Load(), b.Ignored.Load()
		st.Unauthenticated = b.Unauthenticated.Load()
		for _, bs := range a.bridge.Backends() {
			st.Streams = append(st.Streams, streamStatus{Name: bs.Backend, State: bs.State, Claims: bs.ClaimList,
				InFlight: bs.InFlight, LastError: bs.LastError, ConsecutiveFailures: bs.ConsecutiveFailures})
		}
	}
	return st
}
