package document

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

// The JSON view is the fixtures' document shape (spec/fixtures/README.md):
//
//	{"root": <id>, "observables": {<id>: {"kind": k, "slots": {<key>: value}}}}
//
// with ids as text, array keys as hex, map keys as id text and values as
// commit.Value writes them. It is for fixtures, logs and tools.
//
// MarshalJSON writes what the root reaches, which is what the fixtures'
// documents list; detached observables are outside the state. Unmarshal
// also takes observables nothing reaches, and holds them detached.

type jsonDocument struct {
	Root        commit.ID                 `json:"root"`
	Observables map[string]jsonObservable `json:"observables"`
}

type jsonObservable struct {
	Kind  commit.Kind                `json:"kind"`
	Slots map[string]json.RawMessage `json:"slots"`
}

// MarshalJSON writes the reachable state in the fixtures' shape, keys
// sorted (encoding/json sorts map keys), without HTML escaping.
func (d *Document) MarshalJSON() ([]byte, error) {
	out := jsonDocument{Root: d.root.id, Observables: map[string]jsonObservable{}}
	for _, o := range d.walk() {
		jo := jsonObservable{Kind: o.kind, Slots: make(map[string]json.RawMessage, o.len())}
		for _, e := range o.entries {
			v, err := e.v.MarshalJSON()
			if err != nil {
				return nil, err
			}
			jo.Slots[Step(commit.Ref{Kind: o.kind, Key: e.key})] = v
		}
		out.Observables[o.id.String()] = jo
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON replaces d with the document the JSON describes, within
// d's limits (the defaults for a zero Document). It refuses a kind that
// two mentions disagree on, a second attach edge or an attached root, and
// keys or values the format cannot carry.
func (d *Document) UnmarshalJSON(b []byte) error {
	nd, err := ParseJSON(b, d.limits)
	if err != nil {
		return err
	}
	*d = Document{root: nd.root, obs: nd.obs, slots: nd.slots, limits: nd.limits}
	return nil
}

// ParseJSON reads a document in the JSON view.
func ParseJSON(b []byte, l Limits) (*Document, error) {
	var j jsonDocument
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("document: %w", err)
	}
	jr, ok := j.Observables[j.Root.String()]
	if !ok {
		return nil, fmt.Errorf("document: the root %s is not among the observables", j.Root)
	}
	l = l.withDefaults()
	d := New(j.Root, jr.Kind, l)
	if len(j.Observables) > l.MaxObservables {
		return nil, protocol.Errorf(protocol.TooManyObservables, "the document holds more than its observables limit")
	}
	for text, jo := range j.Observables {
		x, err := commit.ParseID(text)
		if err != nil {
			return nil, err
		}
		if x != d.root.id {
			d.obs[x] = newObservable(x, jo.Kind, len(jo.Slots))
		}
	}
	for text, jo := range j.Observables {
		x, _ := commit.ParseID(text)
		o := d.obs[x]
		for key, raw := range jo.Slots {
			if err := d.readSlot(o, key, raw); err != nil {
				return nil, fmt.Errorf("document: %s/%s: %w", text, key, err)
			}
		}
	}
	return d, nil
}

func (d *Document) readSlot(o *observable, text string, raw json.RawMessage) error {
	key, err := parseStep(o.kind, text)
	if err != nil {
		return err
	}
	var v commit.Value
	if err := v.UnmarshalJSON(raw); err != nil {
		return err
	}
	if r, msg := wellFormedValue(&v); r != "" {
		return protocol.Errorf(r, msg)
	}
	if _, dup := o.find(key); dup {
		return protocol.Errorf(protocol.DuplicateSlot, "two keys name one slot")
	}
	if d.slots++; d.slots > d.limits.MaxSlots {
		return protocol.Errorf(protocol.TooManySlots, "the document holds more than its slots limit")
	}
	o.insert(key, v)
	if v.Type != commit.RefValue {
		return nil
	}
	r := v.Ref
	c := d.obs[r.ID]
	if c == nil {
		// Named but not listed: an observable only an alias reaches, or
		// an empty one; the reference states its kind.
		if len(d.obs) >= d.limits.MaxObservables {
			return protocol.Errorf(protocol.TooManyObservables, "the document holds more than its observables limit")
		}
		c = newObservable(r.ID, r.Kind, 0)
		d.obs[r.ID] = c
	}
	if c.kind != r.Kind {
		return protocol.Errorf(protocol.KindConflict, fmt.Sprintf("%s is %s, and a reference says %s", r.ID, article(c.kind), article(r.Kind)))
	}
	if r.Edge != commit.Attach {
		return nil
	}
	if c == d.root || c.parent != nil {
		return protocol.Errorf(protocol.MultipleAttach, r.ID.String()+" has a second attach edge")
	}
	o.attaches++
	c.parent, c.parentKey = o, key
	return nil
}

// parseStep is Step read back: the raw key of a path step.
func parseStep(k commit.Kind, text string) (string, error) {
	switch k {
	case commit.Array:
		p, err := hex.DecodeString(text)
		if err != nil {
			return "", protocol.Errorf(protocol.InvalidPosition, "an array key is hex")
		}
		if !commit.ValidPosition(p) {
			return "", protocol.Errorf(protocol.InvalidPosition, "a position is non-empty and does not end in a zero byte")
		}
		return string(p), nil
	case commit.Map:
		x, err := commit.ParseID(text)
		if err != nil {
			return "", err
		}
		return string(x[:]), nil
	}
	if r, msg := wellFormedRef(commit.Ref{Kind: k, Key: text}); r != "" {
		return "", protocol.Errorf(r, msg)
	}
	return text, nil
}
