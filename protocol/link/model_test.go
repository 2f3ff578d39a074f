package link

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// model is the document behind one end of a convergence run. Each end only
// adds keys of its own, so any order of arrival reaches the same document;
// a refusal is undone by the end that wrote the commit.
type model interface {
	write(key string) (c, undo []byte)
	apply(c []byte) error // an arriving commit; an error refuses it
	undo(u []byte) error
	state() []byte // nil for an empty document
	setState(s []byte) error
	keys() []string // sorted
}

// listModel is a document that is only an ordered list of commits.
type listModel struct{ list []string }

func newList(keys []string) model { return &listModel{slices.Clone(keys)} }

func (m *listModel) write(key string) ([]byte, []byte) {
	m.list = append(m.list, key)
	return []byte(key), []byte("undo " + key)
}

func (m *listModel) apply(c []byte) error {
	m.list = append(m.list, string(c))
	return nil
}

func (m *listModel) undo(u []byte) error {
	i := slices.Index(m.list, strings.TrimPrefix(string(u), "undo "))
	if i < 0 {
		return fmt.Errorf("undo %q: not in %v", u, m.list)
	}
	m.list = slices.Delete(m.list, i, i+1)
	return nil
}

func (m *listModel) state() []byte {
	if len(m.list) == 0 {
		return nil
	}
	return []byte(strings.Join(m.list, ","))
}

func (m *listModel) setState(s []byte) error {
	m.list = nil
	if s != nil {
		m.list = strings.Split(string(s), ",")
	}
	return nil
}

func (m *listModel) keys() []string { return slices.Sorted(slices.Values(m.list)) }

// docModel is a real protocol/document Document, with commits through the
// real commit codec: each key is a slot of the root object.
type docModel struct{ d *document.Document }

var rootID = commit.ID{'r', 'o', 'o', 't'}

func newDoc(keys []string) model {
	m := &docModel{document.New(rootID, commit.Object, document.Limits{})}
	for _, k := range keys {
		m.write(k)
	}
	return m
}

func (m *docModel) write(key string) ([]byte, []byte) {
	c := commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: rootID, Ref: commit.ObjectKey(key), Value: commit.TextValue(key)}}}
	inv, err := m.d.Apply(c)
	if err != nil {
		panic(err) // a fresh key always applies
	}
	return mustEncode(c), mustEncode(inv)
}

func (m *docModel) apply(b []byte) error {
	c, err := commit.Decode(b)
	if err != nil {
		return err
	}
	_, err = m.d.Apply(c)
	return err
}

func (m *docModel) undo(u []byte) error { return m.apply(u) }

func (m *docModel) state() []byte {
	if m.d.Empty() {
		return nil
	}
	return mustEncode(m.d.Snapshot())
}

func (m *docModel) setState(s []byte) error {
	var c commit.Commit
	if s != nil {
		var err error
		if c, err = commit.Decode(s); err != nil {
			return err
		}
	}
	_, err := m.d.Reconcile(c)
	return err
}

func (m *docModel) keys() []string {
	var ks []string
	m.d.Range(rootID, func(ref commit.Ref, _ commit.Value) bool {
		ks = append(ks, ref.Key)
		return true
	})
	return slices.Sorted(slices.Values(ks))
}

func mustEncode(c commit.Commit) []byte {
	b, err := commit.Encode(c)
	if err != nil {
		panic(err)
	}
	return b
}
