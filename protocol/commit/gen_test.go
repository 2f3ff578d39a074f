package commit

import (
	"math"
	"math/rand/v2"
)

// randCommit builds a random well-formed commit of up to maxDeltas deltas
// over a few ids, every (id, ref) distinct, in random order.
func randCommit(rng *rand.Rand, maxDeltas int) Commit {
	n := 1 + rng.IntN(maxDeltas)
	seen := map[[2]string]bool{}
	var c Commit
	for len(c.Deltas) < n {
		var d Delta
		d.ID = ID{11: byte(1 + rng.IntN(4))}
		d.Op = Op(rng.IntN(3))
		d.Ref = randRef(rng)
		k := [2]string{string(d.ID[:]), string(rune(d.Ref.Kind)) + d.Ref.Key}
		if seen[k] {
			continue
		}
		seen[k] = true
		if d.Op != Remove {
			d.Value = randVal(rng)
		}
		c.Deltas = append(c.Deltas, d)
	}
	if rng.IntN(4) == 0 {
		c.Tag = make([]byte, MinTagBytes+rng.IntN(MaxTagBytes-MinTagBytes+1))
		for i := range c.Tag {
			c.Tag[i] = byte(rng.Uint32())
		}
	}
	return c
}

var keyRunes = []rune{'a', 'b', 'z', 'é', '\uE000', 0x1D552, '😀', '0'}

func randText(rng *rand.Rand, maxRunes int) string {
	var s []rune
	for range rng.IntN(maxRunes + 1) {
		s = append(s, keyRunes[rng.IntN(len(keyRunes))])
	}
	return string(s)
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func randRef(rng *rand.Rand) Ref {
	switch rng.IntN(3) {
	case 0:
		s := randText(rng, 4)
		if rng.IntN(30) == 0 {
			s = randText(rng, 40) // past the shared-arena length
		}
		return ObjectKey(s)
	case 1:
		p := randBytes(rng, 1+rng.IntN(4))
		if p[len(p)-1] == 0 {
			p[len(p)-1] = 1
		}
		return ArrayKey(p)
	}
	return MapKey(ID{11: byte(rng.IntN(6))})
}

func randVal(rng *rand.Rand) Value {
	switch rng.IntN(9) {
	case 0:
		return NullValue()
	case 1:
		return BoolValue(rng.IntN(2) == 0)
	case 2:
		edges := []int64{0, 23, 24, 255, 256, 65535, 65536, 1<<32 - 1, 1 << 32, 1 << 53, -1 << 53, -1, -24, -25}
		return IntValue(edges[rng.IntN(len(edges))])
	case 3:
		return IntValue(rng.Int64N(1<<54+1) - 1<<53)
	case 4:
		fs := []float64{0.5, -0.5, 1e-7, 1e300, 1 << 55, 1<<53 + 2, math.SmallestNonzeroFloat64}
		return FloatValue(fs[rng.IntN(len(fs))])
	case 5:
		return TextValue(randText(rng, 30))
	case 6:
		return BytesValue(randBytes(rng, rng.IntN(100)))
	}
	return RefTo(Reference{Edge: Edge(rng.IntN(2)), Kind: Kind(rng.IntN(3)), ID: ID{11: byte(rng.IntN(9))}})
}
