package wire

// Type is the type of the next value under a Reader.
type Type uint8

const (
	// Invalid is what Next reports at the end of the input or on bytes that
	// are not a value of the format.
	Invalid Type = iota
	Uint
	NegInt
	Bytes
	Text
	Array
	False
	True
	Null
	Float
)

func (t Type) String() string {
	switch t {
	case Uint:
		return "uint"
	case NegInt:
		return "negint"
	case Bytes:
		return "bytes"
	case Text:
		return "text"
	case Array:
		return "array"
	case False:
		return "false"
	case True:
		return "true"
	case Null:
		return "null"
	case Float:
		return "float"
	}
	return "invalid"
}

// Major types and simple bytes of the subset (format.md 6.1).
const (
	majorUint   = 0
	majorNegInt = 1
	majorBytes  = 2
	majorText   = 3
	majorArray  = 4
	majorMap    = 5
	majorTag    = 6
	majorSimple = 7

	byteFalse   = 0xf4
	byteTrue    = 0xf5
	byteNull    = 0xf6
	byteFloat64 = 0xfb
)
