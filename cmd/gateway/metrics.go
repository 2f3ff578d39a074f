package main

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/internal/certfile"
	"github.com/weftgate/weftgate/protocol"
)

// statusTimeout bounds how long one scrape or status page waits for the
// document hubs; a hub that does not answer in time is left out.
const statusTimeout = 2 * time.Second

// observers are the histograms the wrappers feed.
type observers struct {
	authority *prometheus.HistogramVec
	storeSync prometheus.Histogram
}

func newObservers() observers {
	return observers{
		authority: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "weftgate_authority_question_seconds",
			Help:    "Time the authority took to answer a question (judge: a commit, open: a peer's open).",
			Buckets: latencyBuckets,
		}, []string{"question"}),
		storeSync: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "weftgate_store_sync_seconds",
			Help:    "Time a store append took to become durable (group commit and sync).",
			Buckets: latencyBuckets,
		}),
	}
}

// newRegistry holds everything /metrics serves: the gateway's own counters
// read at scrape time, the latency histograms, and Go and process metrics.
func newRegistry(srv *gateway.Server, health *storeHealth, obs observers, certs map[string]*certfile.Pair) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		obs.authority,
		obs.storeSync,
		&gatewayCollector{srv: srv, health: health},
		certCollector(certs),
	)
	return reg
}

var descCertExpiry = desc("tls_certificate_expiry_timestamp_seconds",
	"When the certificate served now expires (Unix seconds), by the flag that names its file.", "flag")

// certCollector reports the served certificates' expiry, read at scrape
// time so that a renewal shows at once.
type certCollector map[string]*certfile.Pair

func (c certCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descCertExpiry }

func (c certCollector) Collect(ch chan<- prometheus.Metric) {
	for flag, pair := range c {
		ch <- prometheus.MustNewConstMetric(descCertExpiry, prometheus.GaugeValue, float64(pair.Leaf().NotAfter.Unix()), flag)
	}
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("weftgate_"+name, help, labels, nil)
}

var (
	descBuild = desc("build_info", "The running build; always 1.", "version", "goversion")
	// Not weftgate_connections: OpenMetrics strips _total from the counter
	// weftgate_connections_total, and the two would share a name.
	descConnections       = desc("connections_open", "WebSocket connections open now (one link each).")
	descConnsTotal        = desc("connections_total", "WebSocket connections accepted.")
	descLinks             = desc("links", "Links open now, as listed on the status page.")
	descDocuments         = desc("documents_open", "Documents held in memory.")
	descMembers           = desc("document_members", "Topics sharing a document, summed over documents.")
	descSubscribers       = desc("subscribers", "Backend subscriptions to document streams.")
	descPending           = desc("commits_pending", "Commits waiting for a verdict, summed over documents.")
	descInFlight          = desc("authority_questions_in_flight", "Questions to the authority not yet answered.")
	descQueueBytes        = desc("queue_bytes", "Bytes queued toward sockets, summed over connections.")
	descReceived          = desc("commits_received_total", "Commits received from links.")
	descApplied           = desc("commits_applied_total", "Commits applied and made durable.")
	descDelivered         = desc("commits_delivered_total", "Commit deliveries to links.")
	descRefused           = desc("commits_refused_total", "Commits refused, by reason.", "reason")
	descPeerRefusals      = desc("peer_refusals_total", "Commits the gateway sent that a peer refused.")
	descFaults            = desc("faults_total", "Links and topics ended, by reason.", "reason")
	descSlowConsumers     = desc("slow_consumer_ends_total", "Connections ended because they did not keep up.")
	descAuthorityTimeouts = desc("authority_timeouts_total", "Commits refused because the authority did not answer within -judge-timeout.")
	descHandshakes        = desc("handshake_refusals_total", "WebSocket upgrades refused at the door, by reason.", "reason")
	descDraining          = desc("draining", "1 while the gateway drains for shutdown.")
	descStoreUp           = desc("store_up", "1 while the store accepts writes.")
	descConflicts         = desc("log_conflicts_total", "Appends that lost their cursor to another node on the shared log, then landed after it.")
	descCatchUps          = desc("log_catch_ups_total", "Reads of the shared log to catch up with other nodes.")
	descForeign           = desc("log_foreign_commits_total", "Commits other nodes appended that this node applied and delivered.")
	descFollowing         = desc("documents_following", "Documents whose shared log this node follows.")
)

// gatewayCollector reads the gateway's counters when scraped, so nothing is
// counted twice and the gateway needs no Prometheus dependency.
type gatewayCollector struct {
	srv    *gateway.Server
	health *storeHealth
}

func (c *gatewayCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		descBuild, descConnections, descConnsTotal, descLinks, descDocuments, descMembers,
		descSubscribers, descPending, descInFlight, descQueueBytes, descReceived, descApplied,
		descDelivered, descRefused, descPeerRefusals, descFaults, descSlowConsumers,
		descAuthorityTimeouts, descHandshakes, descDraining, descStoreUp,
		descConflicts, descCatchUps, descForeign, descFollowing,
	} {
		ch <- d
	}
}

func (c *gatewayCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	// The status goes first: it passes through every hub, so counters read
	// after it include everything those hubs finished before.
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	st := c.srv.Status(ctx)
	cancel()
	var members, subs, pending, inflight, queued, following int
	for _, d := range st.Documents {
		if d.Following {
			following++
		}
		members += d.Links
		subs += d.Subscribers
		pending += d.Pending
		inflight += d.InFlight
	}
	for _, l := range st.Links {
		queued += l.QueueBytes
	}
	gauge(descLinks, float64(len(st.Links)))
	gauge(descDocuments, float64(len(st.Documents)))
	gauge(descMembers, float64(members))
	gauge(descSubscribers, float64(subs))
	gauge(descPending, float64(pending))
	gauge(descInFlight, float64(inflight))
	gauge(descQueueBytes, float64(queued))
	gauge(descFollowing, float64(following))
	for reason, n := range st.Handshakes {
		counter(descHandshakes, float64(n), reason)
	}
	m := c.srv.Metrics()
	gauge(descBuild, 1, buildVersion(), runtime.Version())
	gauge(descConnections, float64(m.Connections.Load()))
	counter(descConnsTotal, float64(m.ConnsTotal.Load()))
	counter(descReceived, float64(m.Received.Load()))
	counter(descApplied, float64(m.Applied.Load()))
	counter(descDelivered, float64(m.Delivered.Load()))
	counter(descPeerRefusals, float64(m.PeerRefusals.Load()))
	counter(descSlowConsumers, float64(m.SlowConsumers.Load()))
	counter(descConflicts, float64(m.Conflicts.Load()))
	counter(descCatchUps, float64(m.CatchUps.Load()))
	counter(descForeign, float64(m.Foreign.Load()))
	var timeouts int64
	for _, r := range withKnown(m.Refusals(), knownRefusals) {
		counter(descRefused, float64(r.N), r.Reason)
		if r.Reason == string(gateway.ReasonAuthorityTimeout) {
			timeouts = r.N
		}
	}
	counter(descAuthorityTimeouts, float64(timeouts))
	for _, f := range withKnown(m.Faults(), knownFaults) {
		counter(descFaults, float64(f.N), f.Reason)
	}

	gauge(descDraining, boolf(st.Draining))
	gauge(descStoreUp, boolf(!c.health.down.Load()))
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// knownRefusals and knownFaults are the reasons the gateway itself counts
// commits refused and links ended for. Each is reported from the first
// scrape, at 0 until it happens, so a rate() or an alert on a reason has a
// series to read before the first event. (A backend's own refusal codes
// appear once used.)
var (
	knownRefusals = reasonNames(
		// Decode stage (format.md section 7).
		protocol.MalformedHead, protocol.IndefiniteLength, protocol.NonCanonicalInteger, protocol.Truncated,
		protocol.TrailingBytes, protocol.NestingTooDeep, protocol.IntegerOutOfRange, protocol.NonCanonicalFloat,
		protocol.NonFiniteFloat, protocol.InvalidUTF8, protocol.UnsupportedMajor, protocol.UnsupportedSimple,
		protocol.InvalidCommit, protocol.EmptyCommit, protocol.InvalidTag, protocol.DuplicateSlot,
		protocol.DeltasOutOfOrder, protocol.InvalidDelta, protocol.UnknownDeltaType, protocol.MissingValue,
		protocol.UnexpectedValue, protocol.InvalidID, protocol.InvalidRef, protocol.UnknownRefKind,
		protocol.InvalidReference, protocol.UnknownEdgeKind, protocol.InvalidPosition,
		// Apply stage.
		protocol.KindConflict, protocol.MultipleAttach, protocol.SlotExists, protocol.SlotMissing, protocol.Unreachable,
		// Bounds.
		protocol.CommitTooLarge, protocol.TooManyDeltas, protocol.TooManyObservables, protocol.TooManySlots,
		protocol.TooManyPendingCommit,
		// The gateway's and the bridge's own.
		gateway.ReasonStoreUnavailable, gateway.ReasonInternal, gateway.ReasonReadOnly, gateway.ReasonAuthorityTimeout,
		gateway.ReasonDocumentTooLarge,
		bridge.ReasonNoAuthority, bridge.ReasonAuthorityBusy, bridge.ReasonQuestionTooLarge, bridge.ReasonAuthorityGone,
		gateway.ReasonDeleted,
	)
	knownFaults = append(reasonNames(
		gateway.ReasonSlowConsumer, gateway.ReasonWriteTimeout, gateway.ReasonShutdown, gateway.ReasonClosed,
		gateway.ReasonStateTimeout, gateway.ReasonTooManyOpens, gateway.ReasonDocumentTooLarge,
		protocol.BadFrame, protocol.NoTopic, protocol.NoDocument, protocol.RootMismatch, protocol.UnwantedState,
		protocol.TooManyTopics,
	), "undecodable")
)

func reasonNames(rs ...protocol.Reason) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}

// withKnown is counts with every known reason added at 0, sorted.
func withKnown(counts []gateway.Count, known []string) []gateway.Count {
	seen := make(map[string]bool, len(counts))
	out := slices.Clone(counts)
	for _, c := range counts {
		seen[c.Reason] = true
	}
	for _, k := range known {
		if !seen[k] {
			seen[k] = true
			out = append(out, gateway.Count{Reason: k})
		}
	}
	slices.SortFunc(out, func(a, b gateway.Count) int { return strings.Compare(a.Reason, b.Reason) })
	return out
}
