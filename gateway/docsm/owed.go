package docsm

// Owed is what one member of a document is owed once it asked for the
// document's state (replication.md section 2): the state, before any
// commit, and none of the commits that state covers, neither before it
// nor after it. The zero value is a member that asked for nothing.
//
// A state is taken when wanted, at the document's cursor then (applied
// commits included), and goes out only once that cursor is durable: a
// state never holds a commit the store may still lose, and a document that
// is never idle still answers, after one store write rather than a quiet
// moment. Decision 025.
type Owed struct {
	wanted bool
	taken  bool
	state  []byte
	at     uint64 // the cursor the taken state is at
	after  uint64 // the cursor the last state sent covers
}

// Want records that the member asked for the state. It reports whether a
// state must now be taken for it: not when one already taken answers this
// want too.
func (o *Owed) Want() bool {
	if o.wanted && o.taken {
		return false
	}
	o.wanted = true
	return true
}

// Wanted reports whether a state is owed and not yet sent.
func (o *Owed) Wanted() bool { return o.wanted }

// Taken reports whether the owed state has been taken.
func (o *Owed) Taken() bool { return o.taken }

// Take takes the owed state, at cursor at. Taking again replaces it (a
// store failure moved the cursor back under the one taken).
func (o *Owed) Take(state []byte, at uint64) {
	if o.wanted {
		o.state, o.at, o.taken = state, at, true
	}
}

// Due returns the taken state when durable has reached its cursor, and
// marks it sent: from now on the member gets the commits after its cursor.
func (o *Owed) Due(durable uint64) (state []byte, ok bool) {
	if !o.wanted || !o.taken || o.at > durable {
		return nil, false
	}
	state = o.state
	o.wanted, o.taken, o.after, o.state = false, false, o.at, nil
	return state, true
}

// After is the cursor the last state sent covers: the member's commits
// start after it.
func (o *Owed) After() uint64 { return o.after }

// Gets reports whether the durable commit at cursor goes to the member:
// not while a state is owed (it will cover it), and not when the last
// state sent covers it.
func (o *Owed) Gets(cursor uint64) bool { return !o.wanted && cursor > o.after }
