package docsm

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// TestReplicaTranscripts walks testdata/replica*.txt: one document under a
// bound on its encoded state.
//
//	new 300          a new empty document bounded at 300 bytes
//	set k 40         set key k to a 40-character text: "ok" or the refusal
//	set k 40 undo    the same, keeping its inverse
//	undo             take back the last kept inverse
//	keys             the keys the document holds
//	size             the bound and the state's measured size
func TestReplicaTranscripts(t *testing.T) {
	var r *Replica
	var root commit.ID
	var undos []commit.Commit
	var undoBytes []int
	runScript(t, "replica", func(t *testing.T, line string) []string {
		f := strings.Fields(line)
		switch f[0] {
		case "new":
			max, _ := strconv.Atoi(f[1])
			root = commit.NewID()
			r = NewReplica(document.New(root, commit.Object, document.Limits{}), 0, max)
			undos, undoBytes = nil, nil
		case "set":
			n, _ := strconv.Atoi(f[2])
			op := commit.Add
			if _, ok := r.Get(root, commit.ObjectKey(f[1])); ok {
				op = commit.Replace
			}
			c := commit.Commit{Deltas: []commit.Delta{{Op: op, ID: root, Ref: commit.ObjectKey(f[1]), Value: commit.TextValue(strings.Repeat("x", n))}}}
			b, err := commit.Encode(c)
			if err != nil {
				t.Fatal(err)
			}
			keep := len(f) > 3 && f[3] == "undo"
			inv, err := r.Land(c, len(b), keep)
			if err != nil {
				return []string{fmt.Sprintf("refused %s", protocol.ReasonOf(err))}
			}
			if keep {
				undos, undoBytes = append(undos, inv), append(undoBytes, len(b))
			}
			return []string{"ok"}
		case "undo":
			i := len(undos) - 1
			r.Undo(undos[i], undoBytes[i])
			undos, undoBytes = undos[:i], undoBytes[:i]
		case "keys":
			var keys []string
			for _, k := range []string{"a", "b", "c", "d"} {
				if _, ok := r.Get(root, commit.ObjectKey(k)); ok {
					keys = append(keys, k)
				}
			}
			return []string{"keys " + strings.Join(keys, " ")}
		case "size":
			return []string{fmt.Sprintf("bound %d measured %d", r.Size(), len(r.State()))}
		default:
			t.Fatalf("unknown command %q", line)
		}
		return nil
	})
}
