package main

import (
	"cmp"
	"log/slog"
	"net"
	"net/netip"
	"strings"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// Translation from flags to the packages' configs. Where a flag says "0
// turns it off", the package spells off as negative.

func (s *settings) storeOptions(healthChanged func(error)) store.Options {
	o := store.Options{
		Retain:            s.StoreRetain,
		QueueLength:       s.StoreQueueLength,
		BatchRecords:      s.StoreBatchRecords,
		BatchBytes:        s.StoreBatchBytes,
		CheckpointRecords: s.StoreCheckpointRecords,
		CheckpointBytes:   s.StoreCheckpointBytes,
		MaxFileBytes:      s.StoreMaxFileBytes,
		MmapBytes:         s.StoreMmapBytes,
		ProbeInterval:     s.StoreProbeInterval,
		HealthChanged:     healthChanged,
	}
	if o.Retain == 0 {
		o.Retain = -1
	}
	return o
}

func (s *settings) admission() admission.Config {
	c := admission.Config{
		Limit:          s.RateLimit,
		Window:         s.RateWindow,
		MaxAddresses:   s.RateAddresses,
		AllowedOrigins: s.AllowedOrigins,
		LoopbackHosts:  loopbackAddr(s.WSAddr),
		AllowedHosts:   s.AllowedHosts,
		TrustProxy:     s.TrustProxy,
	}
	if c.Limit == 0 {
		c.Limit = -1
	}
	return c
}

func (s *settings) gateway(st store.Store, auth gateway.Authority, log *slog.Logger) gateway.Config {
	c := gateway.Config{
		Store:                 st,
		Authority:             auth,
		Admission:             s.admission(),
		Logger:                log,
		Paths:                 s.WSPaths,
		MaxMessageBytes:       s.MaxMessageBytes,
		MaxPendingBytes:       s.MaxPendingBytes,
		TailCommits:           s.TailCommits,
		FanoutMembers:         cmp.Or(s.FanoutMembers, -1), // the flag's 0 is "off"
		FanoutInterval:        s.FanoutInterval,
		FanoutChunk:           cmp.Or(s.FanoutChunk, -1), // the flag's 0 is "all at once"
		MaxFramesInFlight:     s.MaxFramesInFlight,
		MaxTopicsPerLink:      s.MaxTopicsPerLink,
		MaxPendingPerDocument: s.MaxPendingPerDocument,
		MaxDocuments:          s.MaxDocuments,
		MaxInFlightVerdicts:   s.MaxInFlightVerdicts,
		JudgeTimeout:          s.JudgeTimeout,
		WriteTimeout:          s.WriteTimeout,
		PingInterval:          s.PingInterval,
		PingTimeout:           s.PingTimeout,
		IdleUnload:            s.IdleUnload,
		SnapshotEvery:         s.SnapshotEvery,
		Compression:           s.Compression,
		DocumentLimits:        document.Limits{MaxObservables: s.MaxObservables, MaxSlots: s.MaxSlots},
		CommitLimits:          commit.Limits{MaxCommitBytes: s.MaxCommitBytes, MaxDeltas: s.MaxDeltas},
		MaxDocumentBytes:      s.MaxDocumentBytes,
		StateTimeout:          s.StateTimeout,
		DrainSpread:           s.DrainSpread,
		MaxOpensPerSecond:     float64(s.MaxOpensPerSecond),
	}
	if c.PingInterval == 0 {
		c.PingInterval = -1
	}
	if c.MaxOpensPerSecond == 0 {
		c.MaxOpensPerSecond = -1 // the flag's 0 turns the bound off
	}
	return c
}

// loopbackAddr reports whether addr (host:port, as -ws-addr) listens on
// loopback only: localhost or a loopback address, not an empty host (every
// interface).
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}
