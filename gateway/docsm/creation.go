package docsm

import "time"

// Creation is the hold a new document's creator has on it: the gateway
// minted the document from the creator's root and asked for its state.
// Until that state has landed (judged, applied, durable), a joiner's want
// is not answered: an empty state would wipe a client that holds the
// document (notes section 12). The creator must send the state within the
// timeout, or the creation is abandoned so a squatter cannot hold a name.
type Creation[K comparable] struct {
	who      K
	on       bool
	stateIn  bool
	deadline time.Time
}

// Begin starts the hold for creator at now.
func (c *Creation[K]) Begin(creator K, now time.Time, timeout time.Duration) {
	*c = Creation[K]{who: creator, on: true, deadline: now.Add(timeout)}
}

// Holding reports whether wants wait for the creator's state.
func (c *Creation[K]) Holding() bool { return c.on }

// Creator is the member holding the document, while it holds it.
func (c *Creation[K]) Creator() (K, bool) { return c.who, c.on }

// StateIn takes the state from who. It reports false, and the state is
// ignored, when who is not the creator or its state already came.
func (c *Creation[K]) StateIn(who K) bool {
	if !c.on || c.who != who || c.stateIn {
		return false
	}
	c.stateIn = true
	return true
}

// Deadline is when the creator's state is late, while it is awaited.
func (c *Creation[K]) Deadline() (time.Time, bool) {
	return c.deadline, c.on && !c.stateIn
}

// Late reports, at now, that the state did not come in time: the creation
// is abandoned (state-timeout) and the hold ends.
func (c *Creation[K]) Late(now time.Time) bool {
	if !c.on || c.stateIn || now.Before(c.deadline) {
		return false
	}
	c.on = false
	return true
}

// Left reports that who left. It reports true when who was the creator
// and its state had not come: the creation is abandoned. A creator whose
// state came may leave; the hold lasts until that state has landed.
func (c *Creation[K]) Left(who K) bool {
	if !c.on || c.who != who || c.stateIn {
		return false
	}
	c.on = false
	return true
}

// Done ends the hold: the creator's state landed, or was refused, or the
// creation was abandoned; the wants that waited may be answered.
func (c *Creation[K]) Done() { c.on = false }
