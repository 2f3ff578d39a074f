package document

// Limits bound what one document holds. The zero value of a field means its
// default. Both count everything the document holds, detached observables
// included, because that is the memory the bound protects.
type Limits struct {
	// MaxObservables bounds the observables held, the root included.
	// Default DefaultMaxObservables.
	MaxObservables int
	// MaxSlots bounds the slots held over all observables.
	// Default DefaultMaxSlots.
	MaxSlots int
}

// Defaults: a slot costs up to about 140 bytes held (BenchmarkHeld100k
// gives 86 right after a load, before lookups build key maps), so a
// document at the slot bound holds up to about 140 MB, a ceiling no shared
// document should reach; a gateway bounds how many documents it holds.
const (
	DefaultMaxObservables = 100_000
	DefaultMaxSlots       = 1_000_000
)

// MaxReasons bounds how many reasons one refusal carries, so a hostile
// commit of many bad deltas cannot make a huge refused frame.
const MaxReasons = 16

func (l Limits) withDefaults() Limits {
	if l.MaxObservables <= 0 {
		l.MaxObservables = DefaultMaxObservables
	}
	if l.MaxSlots <= 0 {
		l.MaxSlots = DefaultMaxSlots
	}
	return l
}
