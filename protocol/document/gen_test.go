package document

import (
	"math/rand/v2"
	"slices"

	"github.com/weftgate/weftgate/protocol/commit"
)

// source is where the generator draws its choices: fuzz bytes or a seeded
// PRNG, so the fuzz target and the property test share one generator.
type source interface {
	byte() byte
	done() bool
}

type bytesSource struct {
	b []byte
	i int
}

func (s *bytesSource) byte() byte {
	if s.i >= len(s.b) {
		return 0
	}
	s.i++
	return s.b[s.i-1]
}

func (s *bytesSource) done() bool { return s.i >= len(s.b) }

type randSource struct{ r *rand.Rand }

func (s randSource) byte() byte { return byte(s.r.Uint32()) }
func (s randSource) done() bool { return false }

// The generator works over a small pool of ids and keys so commits collide
// with what the document holds: slots exist, ids are attached elsewhere,
// kinds disagree. Most commits are valid; some break exactly one rule or
// several.
const genIDs = 24

var (
	genObjectKeys = []string{"a", "b", "c", "dd", "e", "\u00e9"}
	genPositions  = []string{"\x20", "\x40", "\x40\x01", "\x60", "\xff\x01"}
)

// A generator draws new ids from base+1 to base+genIDs. Two documents fed
// from disjoint pools never disagree about an id's kind, as documents with
// random ids never do.
func genID(s source, base int) commit.ID { return id(base + 1 + int(s.byte())%genIDs) }

func genKey(s source, k commit.Kind) string {
	switch k {
	case commit.Array:
		return genPositions[int(s.byte())%len(genPositions)]
	case commit.Map:
		x := id(1 + int(s.byte())%genIDs)
		return string(x[:])
	}
	return genObjectKeys[int(s.byte())%len(genObjectKeys)]
}

func genKind(s source) commit.Kind { return commit.Kind(s.byte() % 3) }

// genValue is a primitive or a reference. A reference names an id from the
// pool with the kind it has here (usually) or a random one.
func genValue(s source, d *Document, base int) commit.Value {
	switch s.byte() % 10 {
	case 0:
		return commit.NullValue()
	case 1:
		return commit.BoolValue(s.byte()%2 == 0)
	case 2:
		return commit.IntValue(int64(s.byte()) - 128)
	case 3:
		return commit.FloatValue(float64(s.byte()) + 0.5)
	case 4:
		return commit.BytesValue([]byte{s.byte()})
	case 5:
		return commit.TextValue(string(rune('a' + s.byte()%26)))
	}
	x := genID(s, base)
	k, ok := d.Kind(x)
	if !ok || s.byte()%16 == 0 {
		k = genKind(s)
	}
	edge := commit.Attach
	if s.byte()%3 == 0 {
		edge = commit.Alias
	}
	return commit.RefTo(commit.Reference{Edge: edge, Kind: k, ID: x})
}

// genCommit draws one commit of 1 to 8 deltas against d. It never repeats
// a slot, so it is always a commit a decoder could have produced.
func genCommit(s source, d *Document, base int) commit.Commit {
	live := d.walk()
	slices.SortFunc(live, func(a, b *observable) int { return compareKey(string(a.id[:]), string(b.id[:])) })
	n := 1 + int(s.byte()%8)
	seen := map[[2]string]bool{}
	var out []commit.Delta
	for len(out) < n && !s.done() {
		var target commit.ID
		var kind commit.Kind
		if s.byte()%8 != 0 {
			o := live[int(s.byte())%len(live)]
			target, kind = o.id, o.kind
		} else {
			target = genID(s, base)
			if k, ok := d.Kind(target); ok && s.byte()%4 != 0 {
				kind = k
			} else {
				kind = genKind(s)
			}
		}
		ref := commit.Ref{Kind: kind, Key: genKey(s, kind)}
		if s.byte()%4 == 0 {
			// prefer an existing slot, where moves and detaches happen
			if o := d.obs[target]; o != nil && o.kind == kind && o.len() > 0 {
				ord := o.sorted()
				ref.Key = o.entries[ord[int(s.byte())%len(ord)]].key
			}
		}
		k := [2]string{string(target[:]), string(rune(ref.Kind)) + ref.Key}
		if seen[k] {
			continue
		}
		seen[k] = true
		_, exists := d.Get(target, ref)
		var op commit.Op
		switch {
		case s.byte()%16 == 0:
			op = commit.Op(s.byte() % 3) // maybe the wrong one
		case exists && s.byte()%6 == 0:
			op = commit.Remove
		case exists:
			op = commit.Replace
		default:
			op = commit.Add
		}
		dl := commit.Delta{Op: op, ID: target, Ref: ref}
		if op != commit.Remove {
			dl.Value = genValue(s, d, base)
		}
		out = append(out, dl)
	}
	if len(out) == 0 {
		out = append(out, commit.Delta{Op: commit.Add, ID: d.root.id, Ref: commit.Ref{Kind: d.root.kind, Key: genKey(s, d.root.kind)}, Value: commit.NullValue()})
	}
	// Hand the deltas over in a drawn order: Apply must not care.
	for i := len(out) - 1; i > 0; i-- {
		j := int(s.byte()) % (i + 1)
		out[i], out[j] = out[j], out[i]
	}
	return commit.Commit{Deltas: out}
}
