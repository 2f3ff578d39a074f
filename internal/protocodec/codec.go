package protocodec

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// vtMessage and vtMarshaler are what protoc-gen-go-vtproto generates.
type vtMessage interface {
	proto.Message
	UnmarshalVT([]byte) error
}

type vtMarshaler interface {
	proto.Message
	SizeVT() int
	MarshalToSizedBufferVT([]byte) (int, error)
}

// Codec is a grpc encoding.CodecV2; give it to a server with
// grpc.ForceServerCodecV2 and to a client with grpc.ForceCodecV2.
type Codec struct {
	// MaxBytes, when set, bounds the encoding of a message received into
	// v; 0 leaves gRPC's own limit. A larger one is refused with
	// ErrTooLarge before anything is decoded, so a request type that only
	// names things cannot make a decoder copy megabytes.
	MaxBytes func(v any) int
}

var fallback = encoding.GetCodecV2(grpcproto.Name)

// Name is gRPC's proto codec's, so the content type on the wire is the same.
func (Codec) Name() string { return grpcproto.Name }

// Marshal encodes v with its generated code, into a pooled buffer when it
// is large, as gRPC's codec does, and then checks the bytes as Unmarshal
// would: protobuf-go refuses to send a string that is not UTF-8.
func (Codec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(vtMarshaler)
	if !ok {
		return fallback.Marshal(v)
	}
	size := m.SizeVT()
	var buf *[]byte
	var b []byte
	if mem.IsBelowBufferPoolingThreshold(size) {
		b = make([]byte, size)
	} else {
		buf = mem.DefaultBufferPool().Get(size)
		b = (*buf)[:size]
	}
	_, err := m.MarshalToSizedBufferVT(b)
	if err == nil {
		err = checked(b, m)
	}
	switch {
	case err != nil && buf != nil:
		mem.DefaultBufferPool().Put(buf)
		return nil, err
	case err != nil:
		return nil, err
	case buf != nil:
		return mem.BufferSlice{mem.NewBuffer(buf, mem.DefaultBufferPool())}, nil
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

// Unmarshal checks data against v's descriptor, then decodes it with v's
// generated code; a message without that code goes to gRPC's codec.
func (c Codec) Unmarshal(data mem.BufferSlice, v any) error {
	if c.MaxBytes != nil {
		if max := c.MaxBytes(v); max > 0 && data.Len() > max {
			return fmt.Errorf("%T of %d bytes, at most %d: %w", v, data.Len(), max, ErrTooLarge)
		}
	}
	m, ok := v.(vtMessage)
	if !ok {
		return fallback.Unmarshal(data, v)
	}
	proto.Reset(m) // proto.Unmarshal replaces; UnmarshalVT merges
	if len(data) == 1 {
		return unmarshal(data[0].ReadOnlyData(), m)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return unmarshal(buf.ReadOnlyData(), m)
}

// unmarshal decodes b into m. The generated code copies every string and
// bytes field, so b may be reused once it returns.
func unmarshal(b []byte, m vtMessage) error {
	if err := checked(b, m); err != nil {
		return err
	}
	return m.UnmarshalVT(b)
}

// checked is check for b as the encoding of a message of m's type.
func checked(b []byte, m proto.Message) error {
	md := m.ProtoReflect().Descriptor()
	if err := check(b, tableOf(md), 0); err != nil {
		return fmt.Errorf("proto: %s: %w", md.FullName(), err)
	}
	return nil
}

// maxDepth is protobuf-go's default recursion limit.
const maxDepth = 10000

var (
	// ErrInvalidUTF8 is a string field that is not UTF-8, which proto3
	// forbids.
	ErrInvalidUTF8 = errors.New("a string field holds invalid UTF-8")
	// ErrTooDeep is nesting past protobuf-go's recursion limit.
	ErrTooDeep = errors.New("messages nest too deeply")
	// ErrFieldNumber is a field number past the largest protobuf allows.
	ErrFieldNumber = errors.New("a field number is out of range")
	// ErrWireType is a known field sent with a wire type other than its
	// own. protobuf-go keeps it as an unknown field; no conforming sender
	// makes one, and the generated code would misread it in a map entry.
	ErrWireType = errors.New("a field has the wrong wire type")
	// ErrMapEntry is a map entry that holds its key or its value twice.
	// protobuf-go takes the last; no conforming sender makes one, and the
	// generated code ORs two varints together.
	ErrMapEntry = errors.New("a map entry repeats its key or value")
	// ErrTooLarge is a message past Codec.MaxBytes for its type.
	ErrTooLarge = errors.New("the message is larger than its type allows")
)

// check walks b as a message of t's type, as protobuf-go's decoder would:
// the wire format, field numbers, nesting and UTF-8, and each known field's
// wire type. Scalars are only skipped; the generated code decodes them
// after. That code reads a packed run's last value past the run's end, a
// map entry's fields whatever their wire type, and a map entry's varint
// sent twice as the two ORed together, so check refuses all three.
func check(b []byte, t *table, depth int) error {
	if depth > maxDepth {
		return ErrTooDeep
	}
	var once uint8 // a map entry's fields seen, by bit: 1<<1 key, 1<<2 value
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		if num > protowire.MaxValidNumber {
			return ErrFieldNumber
		}
		b = b[n:]
		f := t.field(num)
		if t.entry && f != nil {
			if once&(1<<num) != 0 {
				return fmt.Errorf("field %s: %w", f.name, ErrMapEntry)
			}
			once |= 1 << num
		}
		if typ != protowire.BytesType {
			if f != nil && typ != f.wire {
				return fmt.Errorf("field %s: %w", f.name, ErrWireType)
			}
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case f == nil:
		case f.packed:
			if err := checkPacked(v, f.wire); err != nil {
				return fmt.Errorf("field %s: %w", f.name, err)
			}
		case f.wire != protowire.BytesType:
			return fmt.Errorf("field %s: %w", f.name, ErrWireType)
		case f.child != nil:
			if err := check(v, f.child, depth+1); err != nil {
				return err
			}
		case f.utf8 && !utf8.Valid(v):
			return fmt.Errorf("field %s: %w", f.name, ErrInvalidUTF8)
		}
	}
	return nil
}

// checkPacked checks that v is whole values of wire type typ, end to end.
func checkPacked(v []byte, typ protowire.Type) error {
	for len(v) > 0 {
		n := protowire.ConsumeFieldValue(1, typ, v)
		if n < 0 {
			return protowire.ParseError(n)
		}
		v = v[n:]
	}
	return nil
}
