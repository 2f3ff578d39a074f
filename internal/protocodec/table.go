package protocodec

import (
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A table is what check needs of one message type: its string and message
// fields, by number.
type table struct {
	dense  []*field // by field number, below denseMax
	sparse map[protowire.Number]*field
}

// A field is a string field (child nil) or a message field.
type field struct {
	name  protoreflect.FullName
	child *table
}

const denseMax = 64

func (t *table) field(n protowire.Number) *field {
	if int(n) < len(t.dense) {
		return t.dense[n]
	}
	return t.sparse[n]
}

var tables sync.Map // protoreflect.FullName -> *table

// tableOf is md's table, built on first use and kept: a process's
// descriptors never change.
func tableOf(md protoreflect.MessageDescriptor) *table {
	if t, ok := tables.Load(md.FullName()); ok {
		return t.(*table)
	}
	t, _ := tables.LoadOrStore(md.FullName(), build(md, map[protoreflect.FullName]*table{}))
	return t.(*table)
}

// build makes md's table; seen ends the recursion of a recursive type.
func build(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]*table) *table {
	if t, ok := seen[md.FullName()]; ok {
		return t
	}
	t := &table{}
	seen[md.FullName()] = t
	fs := md.Fields()
	for i := range fs.Len() {
		fd := fs.Get(i)
		f := &field{name: fd.FullName()}
		switch fd.Kind() {
		case protoreflect.StringKind:
		case protoreflect.MessageKind:
			f.child = build(fd.Message(), seen)
		default:
			continue
		}
		if n := int(fd.Number()); n < denseMax {
			for len(t.dense) <= n {
				t.dense = append(t.dense, nil)
			}
			t.dense[n] = f
		} else {
			if t.sparse == nil {
				t.sparse = map[protowire.Number]*field{}
			}
			t.sparse[fd.Number()] = f
		}
	}
	return t
}
