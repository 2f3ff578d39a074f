package admission

import "sync/atomic"

// counts is refusals by reason; the set of reasons is fixed, so a metrics
// layer never sees an identifier's own codes multiply its series.
type counts struct {
	limit, host, origin, refused, identifyFailed atomic.Uint64
}

func (g *Gate) refused(reason string) {
	switch reason {
	case ReasonLimit:
		g.counts.limit.Add(1)
	case ReasonHost:
		g.counts.host.Add(1)
	case ReasonOrigin:
		g.counts.origin.Add(1)
	case ReasonRefused:
		g.counts.refused.Add(1)
	case ReasonIdentifyFailed:
		g.counts.identifyFailed.Add(1)
	}
	if g.cfg.OnRefuse != nil {
		g.cfg.OnRefuse(reason)
	}
}

// Refusals is how many requests were refused so far, by reason (limit,
// host, origin, refused, identify-failed); every reason is present.
func (g *Gate) Refusals() map[string]uint64 {
	return map[string]uint64{
		ReasonLimit:          g.counts.limit.Load(),
		ReasonHost:           g.counts.host.Load(),
		ReasonOrigin:         g.counts.origin.Load(),
		ReasonRefused:        g.counts.refused.Load(),
		ReasonIdentifyFailed: g.counts.identifyFailed.Load(),
	}
}
