package docsm

// Gate is what becomes of a commit whose turn has come, before it is
// applied.
type Gate uint8

const (
	// Apply: it lands at the next cursor, if the document takes it.
	Apply Gate = iota
	// Refused: the authority refused it. Its reasons go to its origin
	// alone (the link that sent it, or the backend that wrote it); no
	// other member hears of it.
	Refused
	// Gone: the document went away while the verdict was out (a store
	// failure unloaded it, a delete).
	Gone
	// Mismatch: a compare-and-swap write expected another cursor: someone
	// else wrote first, and the writer is told so, not refused by rule.
	Mismatch
)

// Admit decides a commit at the head: its verdict, whether the document
// is held, and for a compare-and-swap write the cursor it expects
// (nil for any) against the document's cursor.
func Admit(v Verdict, held bool, expect *uint64, cursor uint64) Gate {
	switch {
	case !v.Accepted():
		return Refused
	case !held:
		return Gone
	case expect != nil && *expect != cursor:
		return Mismatch
	}
	return Apply
}
