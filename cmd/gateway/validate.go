package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/internal/certfile"
)

// minTokenBytes is the shortest bearer token accepted: shorter ones are
// guessable.
const minTokenBytes = 16

// resolved is what validation produced beyond the settings themselves.
type resolved struct {
	wsTLS    *tls.Config // nil: plain
	grpcTLS  *tls.Config // nil: plain
	logLevel slog.Level
	// certs are the pairs the TLS configs serve, by the flag that names
	// the certificate file; each is read again when its files change.
	certs map[string]*certfile.Pair
}

// adminPaths are served beside the WebSocket; no WebSocket path may take one.
var adminPaths = []string{"/healthz", "/readyz", "/metrics", "/status"}

// validate checks every setting and loads the TLS files. The first setting
// that cannot work is the error, named.
func (p *parsed) validate() (*resolved, error) {
	s := &p.s
	if s.NatsURL != "" && p.source["store"] == fromDefault {
		s.Store = storeNats
	}
	r := &resolved{}
	check := func(name string, err error) error {
		if err != nil {
			return p.invalid(name, err)
		}
		return nil
	}
	errs := []error{
		check("ws-addr", checkAddr(s.WSAddr, false)),
		check("admin-addr", checkAddr(s.AdminAddr, true)),
		check("pprof", checkPprof(s.Pprof, s.AdminAddr)),
		check("grpc-addr", checkAddr(s.GRPCAddr, false)),
		check("ws-paths", checkPaths(s.WSPaths, s.AdminAddr == "")),
		check("demo", oneOf(s.Demo, demoAuto, demoOn, demoOff)),
		check("store", oneOf(s.Store, storeBolt, storeMemory, storeNats)),
		check("nats-url", checkNats(s.Store, s.NatsURL)),
		check("nats-replicas", oneOf(strconv.Itoa(s.NatsReplicas), "1", "3")),
		check("data-dir", nonEmpty(s.DataDir, s.Store == storeBolt)),
		check("log-format", oneOf(s.LogFormat, "text", "json")),
		check("log-level", r.logLevel.UnmarshalText([]byte(s.LogLevel))),
		check("allowed-origins", checkOrigins(s.AllowedOrigins)),
		check("allowed-hosts", checkHosts(s.AllowedHosts)),
		check("grpc-token", checkToken(s.GRPCToken)),
		check("authority-fallback", oneOf(s.AuthorityFallback, "open", "closed")),
	}
	for _, d := range []struct {
		name string
		v    time.Duration
		zero bool // zero allowed (it turns the feature off)
	}{
		{"store-probe-interval", s.StoreProbeInterval, false},
		{"rate-window", s.RateWindow, false},
		{"judge-timeout", s.JudgeTimeout, false},
		{"question-timeout", s.QuestionTimeout, false},
		{"write-timeout", s.WriteTimeout, false},
		{"ping-interval", s.PingInterval, true},
		{"ping-timeout", s.PingTimeout, false},
		{"idle-unload", s.IdleUnload, false},
		{"state-timeout", s.StateTimeout, false},
		{"drain-timeout", s.DrainTimeout, false},
		{"drain-spread", s.DrainSpread, true},
		{"fanout-interval", s.FanoutInterval, false},
	} {
		errs = append(errs, check(d.name, positive(int64(d.v), d.zero)))
	}
	for _, n := range []struct {
		name string
		v    int64
		zero bool
	}{
		{"store-retain", int64(s.StoreRetain), true},
		{"gc-floor", s.GCFloor, true},
		{"store-queue-length", int64(s.StoreQueueLength), false},
		{"store-batch-records", int64(s.StoreBatchRecords), false},
		{"store-batch-bytes", int64(s.StoreBatchBytes), false},
		{"store-checkpoint-records", int64(s.StoreCheckpointRecords), false},
		{"store-checkpoint-bytes", int64(s.StoreCheckpointBytes), false},
		{"store-max-file-bytes", int64(s.StoreMaxFileBytes), true},
		{"store-mmap-bytes", int64(s.StoreMmapBytes), false},
		{"rate-limit", int64(s.RateLimit), true},
		{"rate-max-addresses", int64(s.RateAddresses), false},
		{"max-message-bytes", s.MaxMessageBytes, false},
		{"max-pending-bytes", int64(s.MaxPendingBytes), false},
		{"tail-commits", int64(s.TailCommits), false},
		{"fanout-members", int64(s.FanoutMembers), true},
		{"fanout-chunk", int64(s.FanoutChunk), true},
		{"max-frames-in-flight", int64(s.MaxFramesInFlight), false},
		{"max-topics-per-link", int64(s.MaxTopicsPerLink), false},
		{"max-pending-per-document", int64(s.MaxPendingPerDocument), false},
		{"max-documents", int64(s.MaxDocuments), false},
		{"max-in-flight-verdicts", int64(s.MaxInFlightVerdicts), false},
		{"max-observables", int64(s.MaxObservables), false},
		{"max-slots", int64(s.MaxSlots), false},
		{"max-commit-bytes", int64(s.MaxCommitBytes), false},
		{"max-deltas", int64(s.MaxDeltas), false},
		{"max-document-bytes", int64(s.MaxDocumentBytes), false},
		{"max-opens-per-second", int64(s.MaxOpensPerSecond), true},
		{"snapshot-every", int64(s.SnapshotEvery), false},
		{"grpc-max-connections", int64(s.GRPCMaxConnections), false},
		{"grpc-max-streams", int64(s.GRPCMaxStreams), false},
	} {
		errs = append(errs, check(n.name, positive(n.v, n.zero)))
	}
	if err := firstOf(errs); err != nil {
		return nil, err
	}
	if err := p.checkExposure(); err != nil {
		return nil, err
	}
	if s.MaxCommitBytes > store.MaxRecordBytes {
		// The store would refuse a commit the gateway accepted.
		return nil, p.invalid("max-commit-bytes", fmt.Errorf("above the store's record limit of %d bytes", store.MaxRecordBytes))
	}
	if err := p.adjust(); err != nil {
		return nil, err
	}

	var err error
	if r.wsTLS, err = p.loadPair(r, "tls-cert", "tls-key"); err != nil {
		return nil, err
	}
	if r.grpcTLS, err = p.loadPair(r, "grpc-tls-cert", "grpc-tls-key"); err != nil {
		return nil, err
	}
	if s.GRPCClientCA != "" {
		if r.grpcTLS == nil {
			return nil, p.invalid("grpc-client-ca", errors.New("mutual TLS needs -grpc-tls-cert and -grpc-tls-key"))
		}
		pool, err := loadPool(s.GRPCClientCA)
		if err != nil {
			return nil, p.invalid("grpc-client-ca", err)
		}
		r.grpcTLS.ClientCAs = pool
		r.grpcTLS.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return r, nil
}

func firstOf(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// checkPprof keeps profiles off the WebSocket listener: they show the
// process's internals and can cost it seconds of CPU, so only a listener an
// operator chose for that may serve them.
func checkPprof(on bool, adminAddr string) error {
	if on && adminAddr == "" {
		return errors.New("needs -admin-addr: profiles are never served on the WebSocket listener")
	}
	return nil
}

// checkAddr accepts host:port with a numeric port; empty only when optional.
func checkAddr(a string, optional bool) error {
	if a == "" {
		if optional {
			return nil
		}
		return errors.New("an address is required (host:port)")
	}
	_, port, err := net.SplitHostPort(a)
	if err != nil {
		return err
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return nil
}

func checkPaths(paths []string, sharesAdmin bool) error {
	if len(paths) == 0 {
		return errors.New("at least one path is required")
	}
	for _, p := range paths {
		if !strings.HasPrefix(p, "/") {
			return fmt.Errorf("path %q does not start with /", p)
		}
		for _, pp := range pagePaths {
			if p == pp || strings.HasPrefix(p, pp+"/") {
				return fmt.Errorf("path %q is a page of the gateway's (/demo, /inspect)", p)
			}
		}
		if sharesAdmin {
			for _, a := range adminPaths {
				if p == a {
					return fmt.Errorf("path %q is an operator endpoint on this listener (set -admin-addr to move those)", p)
				}
			}
		}
	}
	return nil
}

func checkOrigins(origins []string) error {
	var ce *admission.ConfigError
	if err := (admission.Config{AllowedOrigins: origins}).Validate(); errors.As(err, &ce) {
		return fmt.Errorf("%q is not an origin (scheme://host[:port]) or \"any\"", ce.Value)
	} else if err != nil {
		return err
	}
	return nil
}

func checkToken(t string) error {
	if t == "" {
		return nil
	}
	if strings.TrimSpace(t) != t || strings.ContainsAny(t, " \t\r\n") {
		return errors.New("a bearer token holds no whitespace")
	}
	if len(t) < minTokenBytes {
		return fmt.Errorf("shorter than %d bytes", minTokenBytes)
	}
	return nil
}

func oneOf(v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("must be one of %s", strings.Join(allowed, ", "))
}

func nonEmpty(v string, required bool) error {
	if required && strings.TrimSpace(v) == "" {
		return errors.New("a directory is required")
	}
	return nil
}

func positive(v int64, zeroOK bool) error {
	switch {
	case v > 0:
		return nil
	case v == 0 && zeroOK:
		return nil
	case zeroOK:
		return errors.New("must not be negative")
	}
	return errors.New("must be positive")
}

// loadPair loads a certificate and key given together, or neither, into
// a config that serves them and any renewal written over them.
func (p *parsed) loadPair(r *resolved, certFlag, keyFlag string) (*tls.Config, error) {
	cert, key := p.fs.Lookup(certFlag).Value.String(), p.fs.Lookup(keyFlag).Value.String()
	switch {
	case cert == "" && key == "":
		return nil, nil
	case cert == "":
		return nil, p.invalid(certFlag, fmt.Errorf("-%s is set, so -%s is required", keyFlag, certFlag))
	case key == "":
		return nil, p.invalid(keyFlag, fmt.Errorf("-%s is set, so -%s is required", certFlag, keyFlag))
	}
	for _, name := range []string{certFlag, keyFlag} {
		if _, err := os.Stat(p.fs.Lookup(name).Value.String()); err != nil {
			return nil, p.invalid(name, err)
		}
	}
	pair, err := certfile.Load(cert, key)
	if err != nil {
		return nil, p.invalid(certFlag, err)
	}
	if r.certs == nil {
		r.certs = map[string]*certfile.Pair{}
	}
	r.certs[certFlag] = pair
	return &tls.Config{GetCertificate: pair.GetCertificate, MinVersion: tls.VersionTLS12}, nil
}

func loadPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, errors.New("holds no PEM certificate")
	}
	return pool, nil
}

// prepareDataDir creates the data directory and proves it writable, so a
// bad -data-dir fails at start, named, not at the first commit.
func (p *parsed) prepareDataDir() error {
	if p.s.Store != storeBolt {
		return nil
	}
	dir := p.s.DataDir
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return p.invalid("data-dir", err)
	}
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return p.invalid("data-dir", fmt.Errorf("not writable: %w", err))
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return p.invalid("data-dir", err)
	}
	return nil
}

func checkHosts(hosts []string) error {
	var ce *admission.ConfigError
	if err := (admission.Config{AllowedHosts: hosts}).Validate(); errors.As(err, &ce) {
		return fmt.Errorf("%q is not a host name or address without a port, or \"any\"", ce.Value)
	} else if err != nil {
		return err
	}
	return nil
}

// checkExposure refuses a start that would hand the documents to whoever
// reaches a port: a gRPC listener off loopback is a full backend unless it
// asks for a token or a client certificate, and an admin listener off
// loopback lists every document. Each may be opened on purpose.
func (p *parsed) checkExposure() error {
	s := &p.s
	if !onLoopback(s.GRPCAddr) && s.GRPCToken == "" && s.GRPCClientCA == "" && !s.InsecureGRPC {
		return p.invalid("grpc-addr", errors.New("is not on loopback, and neither -grpc-token nor -grpc-client-ca is set: "+
			"anyone who reaches it could read and write every document (set one, or -insecure-grpc to serve it so on purpose)"))
	}
	if s.AdminAddr != "" && !onLoopback(s.AdminAddr) && !s.InsecureAdmin {
		return p.invalid("admin-addr", errors.New("is not on loopback: its /status and /metrics list every document "+
			"to anyone who reaches it (bind it to loopback, or set -insecure-admin to serve it so on purpose)"))
	}
	return nil
}

// onLoopback reports whether addr can only be reached from this host: a
// loopback IP or localhost. An empty host is every interface.
func onLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// statusServed reports whether /status and /metrics are served at all: on
// the admin listener, or on the WebSocket listener when that is on loopback
// or -insecure-admin says so.
func (s *settings) statusServed() bool {
	return s.AdminAddr != "" || onLoopback(s.WSAddr) || s.InsecureAdmin
}

// frameOverhead is what a commits frame adds around one commit: the gateway
// bounds a commit by the message limit less this.
const frameOverhead = gateway.DefaultMaxMessageBytes - gateway.DefaultMaxCommitBytes

// adjust makes the settings what the packages will use, so that `gateway
// config` and the settings log show the values in effect, and refuses
// settings that contradict each other. A default that does not fit another
// setting is lowered; a value the operator gave is an error instead.
func (p *parsed) adjust() error {
	s := &p.s
	lim := s.MaxMessageBytes - frameOverhead
	if lim < 1 {
		return p.invalid("max-message-bytes", fmt.Errorf("leaves no room for a commit (at least %d bytes)", frameOverhead+1))
	}
	if int64(s.MaxCommitBytes) > lim {
		if p.source["max-commit-bytes"] != fromDefault {
			return p.invalid("max-commit-bytes", fmt.Errorf("above -max-message-bytes less %d (%d): a commit must fit the frame that delivers it", frameOverhead, lim))
		}
		s.MaxCommitBytes = int(lim)
	}
	if int64(s.MaxDocumentBytes) > lim {
		if p.source["max-document-bytes"] != fromDefault {
			return p.invalid("max-document-bytes", fmt.Errorf("above -max-message-bytes less %d (%d): a joiner must receive the state in one message", frameOverhead, lim))
		}
		s.MaxDocumentBytes = int(lim)
	}
	if s.QuestionTimeout > bridge.DefaultMaxQuestionTimeout {
		return p.invalid("question-timeout", fmt.Errorf("above the bridge's bound of %v", bridge.DefaultMaxQuestionTimeout))
	}
	if s.QuestionTimeout >= s.JudgeTimeout && p.source["question-timeout"] == fromDefault {
		// The default shares a lowered -judge-timeout between the attempts.
		s.QuestionTimeout = s.JudgeTimeout / bridge.DefaultMaxAttempts
		if s.QuestionTimeout <= 0 {
			return p.invalid("judge-timeout", errors.New("too short to share between a backend's attempts"))
		}
	}
	if s.DrainSpread >= s.DrainTimeout {
		return p.invalid("drain-spread", fmt.Errorf("not shorter than -drain-timeout (%v): the drain would overrun while links were still being ended", s.DrainTimeout))
	}
	if s.QuestionTimeout >= s.JudgeTimeout {
		return p.invalid("question-timeout", fmt.Errorf("not shorter than -judge-timeout (%v): a commit would be refused authority-timeout before its backend's time is up", s.JudgeTimeout))
	}
	return nil
}

// checkDataDir fails as prepareDataDir would, without creating anything:
// the directory, or the nearest part of its path that exists, must be a
// writable directory. `gateway config` runs it.
func (p *parsed) checkDataDir() error {
	if p.s.Store != storeBolt {
		return nil
	}
	dir := filepath.Clean(p.s.DataDir)
	for {
		fi, err := os.Stat(dir)
		if errors.Is(err, fs.ErrNotExist) && filepath.Dir(dir) != dir {
			dir = filepath.Dir(dir)
			continue
		}
		if err != nil {
			return p.invalid("data-dir", err)
		}
		if !fi.IsDir() {
			return p.invalid("data-dir", fmt.Errorf("%s is not a directory", dir))
		}
		break
	}
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return p.invalid("data-dir", fmt.Errorf("not writable: %w", err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// checkNats: -store nats needs -nats-url, and -nats-url means nothing to
// another store, so both set apart is a mistake, named.
func checkNats(kind, urls string) error {
	switch {
	case kind == storeNats && urls == "":
		return errors.New("-store nats needs the NATS servers' urls")
	case kind != storeNats && urls != "":
		return fmt.Errorf("set with -store %s, which does not use NATS (drop one)", kind)
	}
	return nil
}
