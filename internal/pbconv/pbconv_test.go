package pbconv

import (
	"math"
	"testing"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

func TestValuesRoundTrip(t *testing.T) {
	id := commit.NewID()
	for _, v := range []commit.Value{
		commit.NullValue(), commit.BoolValue(true), commit.IntValue(-1 << 53), commit.FloatValue(0.5),
		commit.TextValue("é"), commit.BytesValue([]byte{0, 1}),
		commit.RefTo(commit.Reference{Edge: commit.Alias, Kind: commit.Map, ID: id}),
	} {
		got, err := ValueFrom(ValueTo(v))
		if err != nil || got != v {
			t.Errorf("%+v came back %+v (%v)", v, got, err)
		}
	}
	for _, r := range []commit.Ref{commit.ObjectKey("k"), commit.ArrayKey([]byte{0x80}), commit.MapKey(id)} {
		got, err := RefFrom(RefTo(r))
		if err != nil || got != r {
			t.Errorf("%+v came back %+v (%v)", r, got, err)
		}
	}
}

// What the aweft encoding cannot carry is refused with its decode reason.
func TestReadingIsStrict(t *testing.T) {
	cases := []struct {
		v    *v1.Value
		want protocol.Reason
	}{
		{nil, protocol.MissingValue},
		{&v1.Value{Kind: &v1.Value_IntValue{IntValue: 1<<53 + 1}}, protocol.IntegerOutOfRange},
		{&v1.Value{Kind: &v1.Value_FloatValue{FloatValue: 3}}, protocol.NonCanonicalFloat},
		{&v1.Value{Kind: &v1.Value_FloatValue{FloatValue: math.Inf(1)}}, protocol.NonFiniteFloat},
		{&v1.Value{Kind: &v1.Value_Reference{}}, protocol.InvalidReference},
	}
	for _, c := range cases {
		if _, err := ValueFrom(c.v); protocol.ReasonOf(err) != c.want {
			t.Errorf("%v: %v, want %s", c.v, err, c.want)
		}
	}
	if _, err := RefFrom(&v1.Ref{Key: &v1.Ref_ArrayPosition{ArrayPosition: []byte{1, 0}}}); protocol.ReasonOf(err) != protocol.InvalidPosition {
		t.Errorf("position ending in zero: %v", err)
	}
	if _, err := IDFrom(&v1.Id{Value: []byte{1}}); protocol.ReasonOf(err) != protocol.InvalidID {
		t.Errorf("short id: %v", err)
	}
	if p := PathTo([]string{}); p == nil || PathFrom(p) == nil {
		t.Error("the root's empty path must stay distinct from no path")
	}
	if PathTo(nil) != nil || PathFrom(nil) != nil {
		t.Error("no path must stay nil")
	}
}
