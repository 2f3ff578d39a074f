package peer

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// jsonView writes the document as one JSON tree, for people and tests: an
// object is a JSON object and a map a JSON object keyed by the ids' text,
// both with keys sorted as encoding/json sorts a map's; an array is a JSON
// array in position order. An attach reference is the observable it
// attaches, written in place; every other value is written as commit.Value
// writes it (a byte string {"bytes": hex}, an alias {"ref", "kind",
// "edge"}). Attach edges form a tree, so each observable is written once.
func jsonView(d *document.Document) ([]byte, error) {
	id, _ := d.Root()
	return appendObservable(nil, d, id)
}

type entry struct {
	key string
	v   commit.Value
}

func appendObservable(b []byte, d *document.Document, id commit.ID) ([]byte, error) {
	kind, _ := d.Kind(id)
	var es []entry
	d.Range(id, func(ref commit.Ref, v commit.Value) bool {
		k := ref.Key
		if ref.Kind == commit.Map {
			k = commit.ID([]byte(k)).String()
		}
		es = append(es, entry{k, v})
		return true
	})
	open, shut := byte('{'), byte('}')
	if kind == commit.Array {
		open, shut = '[', ']'
	} else {
		slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	}
	b = append(b, open)
	var err error
	for i, e := range es {
		if i > 0 {
			b = append(b, ',')
		}
		if kind != commit.Array {
			if b, err = appendJSON(b, e.key); err != nil {
				return nil, err
			}
			b = append(b, ':')
		}
		if e.v.Type == commit.RefValue && e.v.Ref.Edge == commit.Attach {
			b, err = appendObservable(b, d, e.v.Ref.ID)
		} else {
			b, err = appendJSON(b, e.v)
		}
		if err != nil {
			return nil, err
		}
	}
	return append(b, shut), nil
}

func appendJSON(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, j...), nil
}
