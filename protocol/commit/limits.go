package commit

// Bounds of a commit. The tag bounds are the format's (section 6.8); the
// others are weftgate's, each refused with its own reason.
const (
	MinTagBytes = 4
	MaxTagBytes = 32

	// DefaultMaxCommitBytes bounds one encoded commit (commit-too-large).
	DefaultMaxCommitBytes = 1 << 20
	// DefaultMaxDeltas bounds the deltas in one commit (too-many-deltas).
	DefaultMaxDeltas = 65536
)

// Limits bound what DecodeWithLimits accepts. A zero field means its default.
type Limits struct {
	MaxCommitBytes int
	MaxDeltas      int
}

func (l Limits) maxCommitBytes() int {
	if l.MaxCommitBytes > 0 {
		return l.MaxCommitBytes
	}
	return DefaultMaxCommitBytes
}

func (l Limits) maxDeltas() int {
	if l.MaxDeltas > 0 {
		return l.MaxDeltas
	}
	return DefaultMaxDeltas
}
