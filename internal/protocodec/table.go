package protocodec

import (
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A table is what check needs of one message type: its fields, by number.
type table struct {
	dense  []*field // by field number, below denseMax
	sparse map[protowire.Number]*field
	entry  bool // a map entry: key 1, value 2
}

// A field is one field of a message: the wire type of one value, and what
// check walks inside it.
type field struct {
	name   protoreflect.FullName
	wire   protowire.Type
	packed bool   // a repeated scalar, which may also come as one packed run
	utf8   bool   // a string
	child  *table // a message
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
	t := &table{entry: md.IsMapEntry()}
	seen[md.FullName()] = t
	fs := md.Fields()
	for i := range fs.Len() {
		fd := fs.Get(i)
		f := &field{name: fd.FullName(), wire: protowire.VarintType}
		switch fd.Kind() {
		case protoreflect.StringKind:
			f.wire, f.utf8 = protowire.BytesType, true
		case protoreflect.BytesKind:
			f.wire = protowire.BytesType
		case protoreflect.MessageKind:
			f.wire, f.child = protowire.BytesType, build(fd.Message(), seen)
		case protoreflect.GroupKind:
			continue // not in proto3: check skips it as unknown
		case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
			f.wire = protowire.Fixed32Type
		case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
			f.wire = protowire.Fixed64Type
		}
		f.packed = fd.IsList() && f.wire != protowire.BytesType
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
