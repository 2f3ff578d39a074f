package wire

// ValidText reports whether p is well formed UTF-8, as utf8.Valid does:
// no overlong forms, no surrogates, nothing past U+10FFFF. Text values mix
// rune widths, where utf8.Valid's branch on each rune's width is mispredicted
// about once a rune; this reads the bytes through a DFA with no branch but
// the loop's, after an inline look at the ASCII prefix that short keys are.
func ValidText(p []byte) bool {
	for i, c := range p {
		if c >= 0x80 {
			return validUTF8(p[i:])
		}
	}
	return true
}

func validUTF8(p []byte) bool {
	var s uint64 // 6 times the state (utf8DFA)
	for _, c := range p {
		s = utf8DFA[c] >> (s & 63)
	}
	return s&63 == 0
}

// The states of a UTF-8 reader: what the bytes so far still need. accept
// must be 0, so the reader starts there; reject is never left.
const (
	accept  = iota
	reject  //
	cont1   // one continuation byte
	cont2   // two
	cont3   // three
	afterE0 // A0 to BF, then one more: no overlong three-byte form
	afterED // 80 to 9F, then one more: no surrogate
	afterF0 // 90 to BF, then two more: no overlong four-byte form
	afterF4 // 80 to 8F, then two more: nothing past U+10FFFF
	nStates //
)

// utf8DFA[c] holds, at bits 6s to 6s+5 for each state s, 6 times the state
// that reading c in state s leads to; so with the state kept as 6 times
// itself, the next is utf8DFA[c] >> state & 63.
var utf8DFA = func() (t [256]uint64) {
	set := func(lo, hi byte, from, to int) {
		for c := int(lo); c <= int(hi); c++ {
			t[c] = t[c]&^(63<<(6*from)) | uint64(6*to)<<(6*from)
		}
	}
	for s := range nStates {
		set(0x00, 0xff, s, reject) // unless listed below
	}
	set(0x00, 0x7f, accept, accept)
	set(0xc2, 0xdf, accept, cont1)
	set(0xe0, 0xe0, accept, afterE0)
	set(0xe1, 0xec, accept, cont2)
	set(0xed, 0xed, accept, afterED)
	set(0xee, 0xef, accept, cont2)
	set(0xf0, 0xf0, accept, afterF0)
	set(0xf1, 0xf3, accept, cont3)
	set(0xf4, 0xf4, accept, afterF4)
	set(0x80, 0xbf, cont1, accept)
	set(0x80, 0xbf, cont2, cont1)
	set(0x80, 0xbf, cont3, cont2)
	set(0xa0, 0xbf, afterE0, cont1)
	set(0x80, 0x9f, afterED, cont1)
	set(0x90, 0xbf, afterF0, cont2)
	set(0x80, 0x8f, afterF4, cont2)
	return t
}()
