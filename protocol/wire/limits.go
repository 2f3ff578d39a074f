package wire

// MaxDepth is how deeply arrays may nest (format.md 6.1). The format itself
// needs four levels; the ninth array is refused so a hostile input cannot
// drive a reader deep.
const MaxDepth = 8

// MaxInt and MinInt bound the integers the format carries: every whole number
// in this range is exact as a float64, and 2^53+1 is not (format.md 6.2).
const (
	MaxInt = 1 << 53
	MinInt = -(1 << 53)
)

// ValidInt reports whether v is an integer the format can carry.
func ValidInt(v int64) bool { return v >= MinInt && v <= MaxInt }
