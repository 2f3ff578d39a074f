package commit

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/weftgate/weftgate/internal/spectest"
	"github.com/weftgate/weftgate/protocol"
)

// jsonEqual compares two JSON texts as data, numbers by their spelling.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	for _, p := range []struct {
		b []byte
		v *any
	}{{a, &x}, {b, &y}} {
		d := json.NewDecoder(bytesReader(p.b))
		d.UseNumber()
		if err := d.Decode(p.v); err != nil {
			t.Fatalf("%s: %v", p.b, err)
		}
	}
	return reflect.DeepEqual(x, y)
}

// Every fixture delta reads and writes back to the same JSON.
func TestJSONFixtureDeltas(t *testing.T) {
	for _, p := range spectest.Files(t, "fixtures") {
		t.Run(fixtureName(p), func(t *testing.T) {
			var f validFixture
			readJSON(t, p, &f)
			for _, c := range f.Commits {
				for _, raw := range c.Deltas {
					var d Delta
					if err := json.Unmarshal(raw, &d); err != nil {
						t.Fatalf("%s: %v", raw, err)
					}
					out, err := json.Marshal(d)
					if err != nil {
						t.Fatal(err)
					}
					if !jsonEqual(t, raw, out) {
						t.Fatalf("wrote %s, read %s", out, raw)
					}
				}
			}
		})
	}
}

func TestJSONCommit(t *testing.T) {
	id := ID{11: 1}
	c := Commit{Deltas: []Delta{
		{Op: Replace, ID: id, Ref: ObjectKey("<title>"), Value: TextValue("a & b")},
		{Op: Remove, ID: id, Ref: ArrayKey([]byte{0x20, 0x01})},
		{Op: Add, ID: id, Ref: MapKey(ID{11: 2}), Value: RefTo(Reference{Edge: Alias, Kind: Map, ID: ID{11: 2}})},
		{Op: Add, ID: id, Ref: ObjectKey("b"), Value: BytesValue([]byte{0, 0xff})},
		{Op: Add, ID: id, Ref: ObjectKey("n"), Value: NullValue()},
		{Op: Add, ID: id, Ref: ObjectKey("f"), Value: FloatValue(1e-7)},
	}, Tag: []byte{0x9f, 0x2b, 0x41, 0xc7}}
	// marshalNoEscape, because json.Marshal escapes <, > and & in the
	// output of every MarshalJSON (still the same JSON data).
	out, err := marshalNoEscape(c)
	if err != nil {
		t.Fatal(err)
	}
	if std, err := json.Marshal(c); err != nil || !jsonEqual(t, std, out) {
		t.Fatalf("json.Marshal gave %s (%v)", std, err)
	}
	want := `{"deltas":[` +
		`{"type":"replace","id":"AAAAAAAAAAAAAAAB","ref":{"kind":"object","key":"<title>"},"value":"a & b"},` +
		`{"type":"remove","id":"AAAAAAAAAAAAAAAB","ref":{"kind":"array","key":"2001"}},` +
		`{"type":"add","id":"AAAAAAAAAAAAAAAB","ref":{"kind":"map","key":"AAAAAAAAAAAAAAAC"},"value":{"ref":"AAAAAAAAAAAAAAAC","kind":"map","edge":"alias"}},` +
		`{"type":"add","id":"AAAAAAAAAAAAAAAB","ref":{"kind":"object","key":"b"},"value":{"bytes":"00ff"}},` +
		`{"type":"add","id":"AAAAAAAAAAAAAAAB","ref":{"kind":"object","key":"n"},"value":null},` +
		`{"type":"add","id":"AAAAAAAAAAAAAAAB","ref":{"kind":"object","key":"f"},"value":1e-7}` +
		`],"tag":"9f2b41c7"}`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	var back Commit
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Fatalf("read back %+v, want %+v", back, c)
	}
	// No tag: the field is left out and reads back as nil.
	out, _ = json.Marshal(Commit{Deltas: c.Deltas[:1]})
	if !json.Valid(out) || string(out[len(out)-2:]) != "]}" {
		t.Fatalf("untagged commit: %s", out)
	}
	back = Commit{}
	if err := json.Unmarshal([]byte(`{"bytes":"ignored","deltas":[]}`), &back); err != nil || back.Tag != nil {
		t.Fatalf("untagged read: %v %v", back, err)
	}
}

func TestJSONNumbers(t *testing.T) {
	cases := []struct {
		in   string
		want Value
	}{
		{"0", IntValue(0)},
		{"-0", IntValue(0)},
		{"-0.0", IntValue(0)},
		{"3.0", IntValue(3)},
		{"1e2", IntValue(100)},
		{"9007199254740992", IntValue(1 << 53)},
		{"-9007199254740992", IntValue(-1 << 53)},
		{"9007199254740991", IntValue(1<<53 - 1)},
		{"36028797018963970", Value{Type: Float, Float: 1 << 55}},
		{"-36028797018963970", Value{Type: Float, Float: -(1 << 55)}},
		{"0.5", Value{Type: Float, Float: 0.5}},
		{"1e-7", Value{Type: Float, Float: 1e-7}},
		{"1e+300", Value{Type: Float, Float: 1e300}},
		{"1e400", Value{}},
	}
	for _, c := range cases {
		var v Value
		err := json.Unmarshal([]byte(c.in), &v)
		if c.want == (Value{}) {
			if protocol.ReasonOf(err) != protocol.NonFiniteFloat {
				t.Errorf("%s: err %v, want non-finite-float", c.in, err)
			}
			continue
		}
		if err != nil || v != c.want {
			t.Errorf("%s: read %+v (%v), want %+v", c.in, v, err, c.want)
		}
	}
	for _, c := range []struct {
		v    Value
		want string
	}{
		{FloatValue(1 << 55), "36028797018963970"},
		{FloatValue(1e300), "1e+300"},
		{FloatValue(-0.5), "-0.5"},
		{IntValue(-1 << 53), "-9007199254740992"},
	} {
		out, err := json.Marshal(c.v)
		if err != nil || string(out) != c.want {
			t.Errorf("%+v: wrote %s (%v), want %s", c.v, out, err, c.want)
		}
	}
}

func TestFloatValueNormalises(t *testing.T) {
	if FloatValue(3) != IntValue(3) || FloatValue(math.Copysign(0, -1)) != IntValue(0) ||
		FloatValue(1<<53) != IntValue(1<<53) || FloatValue(-(1<<53)) != IntValue(-1<<53) {
		t.Fatal("whole floats within 2^53 are not Ints")
	}
	if v := FloatValue(1<<53 + 2); v.Type != Float {
		t.Fatalf("2^53+2 became %+v", v)
	}
	if v := FloatValue(0.5); v.Type != Float || v.Float != 0.5 {
		t.Fatalf("0.5 became %+v", v)
	}
	if v := FloatValue(math.Inf(1)); v.Type != Float {
		t.Fatalf("+Inf became %+v", v)
	}
}

// Each malformed JSON delta is refused with a named reason.
func TestJSONRefusals(t *testing.T) {
	const id = `"AAAAAAAAAAAAAAAB"`
	obj := `{"kind":"object","key":"k"}`
	cases := []struct {
		in   string
		want protocol.Reason
	}{
		{`{"type":"move","id":` + id + `,"ref":` + obj + `,"value":1}`, protocol.UnknownDeltaType},
		{`{"id":` + id + `,"ref":` + obj + `,"value":1}`, protocol.UnknownDeltaType},
		{`{"type":"add","id":"short","ref":` + obj + `,"value":1}`, protocol.InvalidID},
		{`{"type":"add","id":"AAAAAAAAAAAAAAA!","ref":` + obj + `,"value":1}`, protocol.InvalidID},
		{`{"type":"add","ref":` + obj + `,"value":1}`, protocol.InvalidID},
		{`{"type":"add","id":` + id + `,"value":1}`, protocol.InvalidRef},
		{`{"type":"add","id":` + id + `,"ref":` + obj + `}`, protocol.MissingValue},
		{`{"type":"remove","id":` + id + `,"ref":` + obj + `,"value":null}`, protocol.UnexpectedValue},
		{`{"type":"add","id":` + id + `,"ref":{"kind":"set","key":"k"},"value":1}`, protocol.UnknownRefKind},
		{`{"type":"add","id":` + id + `,"ref":{"kind":"object","key":7},"value":1}`, protocol.InvalidRef},
		{`{"type":"add","id":` + id + `,"ref":{"kind":"object","key":"\ud800"},"value":1}`, protocol.InvalidUTF8},
		{`{"type":"add","id":` + id + `,"ref":{"kind":"object","key":"\udc00x"},"value":1}`, protocol.InvalidUTF8},
		{"{\"type\":\"add\",\"id\":" + id + ",\"ref\":{\"kind\":\"object\",\"key\":\"\xc3\x28\"},\"value\":1}", protocol.InvalidUTF8},
		{`{"type":"add","id":` + id + `,"ref":{"kind":"array","key":"4000"},"value":1}`, protocol.InvalidPosition},
		{`{"type":"add","id":` + id + `,"ref":{"kind":"array","key":""},"value":1}`, protocol.InvalidPosition},
		{`{"type":"add","id":` + id + `,"ref":{"kind":"array","key":"zz"},"value":1}`, protocol.InvalidRef},
		{`{"type":"add","id":` + id + `,"ref":{"kind":"map","key":"AAAA"},"value":1}`, protocol.InvalidID},
		{`{"type":"add","id":` + id + `,"ref":` + obj + `,"value":[1]}`, protocol.InvalidDelta},
		{`{"type":"add","id":` + id + `,"ref":` + obj + `,"value":{"ref":` + id + `,"kind":"object"}}`, protocol.InvalidReference},
		{`{"type":"add","id":` + id + `,"ref":` + obj + `,"value":{"ref":` + id + `,"kind":"object","edge":"weak"}}`, protocol.UnknownEdgeKind},
		{`{"type":"add","id":` + id + `,"ref":` + obj + `,"value":{"ref":` + id + `,"kind":"tree","edge":"alias"}}`, protocol.UnknownRefKind},
		{`{"type":"add","id":` + id + `,"ref":` + obj + `,"value":{"other":1}}`, protocol.InvalidReference},
		{`{"type":"add","id":` + id + `,"ref":` + obj + `,"value":"\ud83d"}`, protocol.InvalidUTF8},
	}
	for _, c := range cases {
		var d Delta
		err := json.Unmarshal([]byte(c.in), &d)
		if got := protocol.ReasonOf(err); got != c.want {
			t.Errorf("%s: %v (reason %q), want %s", c.in, err, got, c.want)
		}
	}
	// A surrogate pair is text, and so is an escaped backslash before a u.
	var v Value
	if err := json.Unmarshal([]byte(`"\ud83d\ude00 \\ud800"`), &v); err != nil || v != TextValue("😀 \\ud800") {
		t.Fatalf("pair: %+v %v", v, err)
	}
	var c Commit
	if err := json.Unmarshal([]byte(`{"deltas":[],"tag":"9f2b"}`), &c); protocol.ReasonOf(err) != protocol.InvalidTag {
		t.Fatalf("short tag: %v", err)
	}
}

func TestJSONMarshalRefusals(t *testing.T) {
	id := ID{11: 1}
	cases := []struct {
		d    Delta
		want protocol.Reason
	}{
		{Delta{Op: Add, ID: id, Ref: ObjectKey("k"), Value: FloatValue(math.NaN())}, protocol.NonFiniteFloat},
		{Delta{Op: Add, ID: id, Ref: ObjectKey("k"), Value: IntValue(1<<53 + 1)}, protocol.IntegerOutOfRange},
		{Delta{Op: Add, ID: id, Ref: ObjectKey("k"), Value: TextValue("\xff")}, protocol.InvalidUTF8},
		{Delta{Op: Add, ID: id, Ref: ObjectKey("\xff"), Value: NullValue()}, protocol.InvalidUTF8},
		{Delta{Op: Add, ID: id, Ref: Ref{Kind: Map, Key: "x"}, Value: NullValue()}, protocol.InvalidID},
		{Delta{Op: Add, ID: id, Ref: Ref{Kind: 7}, Value: NullValue()}, protocol.UnknownRefKind},
		{Delta{Op: 9, ID: id, Ref: ObjectKey("k"), Value: NullValue()}, protocol.UnknownDeltaType},
		{Delta{Op: Add, ID: id, Ref: ObjectKey("k"), Value: RefTo(Reference{Edge: 5})}, protocol.UnknownEdgeKind},
		{Delta{Op: Add, ID: id, Ref: ObjectKey("k"), Value: Value{Type: 42}}, protocol.InvalidDelta},
	}
	for _, c := range cases {
		_, err := json.Marshal(c.d)
		var pe *protocol.Error
		if !errors.As(err, &pe) || pe.Reason != c.want {
			t.Errorf("%+v: %v, want %s", c.d, err, c.want)
		}
	}
}
