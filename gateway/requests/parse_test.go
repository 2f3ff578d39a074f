package requests

import (
	"errors"
	"reflect"
	"testing"

	"github.com/weftgate/weftgate/gateway/admission"
)

func TestParseViolations(t *testing.T) {
	cases := []struct {
		in   string
		kind ViolationKind
	}{
		{``, InvalidJSON},
		{`{`, InvalidJSON},
		{`{"id":1,"name":"a"} x`, InvalidJSON},
		{`{"id":1,"name":"a",}`, InvalidJSON},
		{`{'id':1}`, InvalidJSON},
		{`null`, NotObject},
		{`[1,"a"]`, NotObject},
		{`"text"`, NotObject},
		{`7`, NotObject},
		{`true`, NotObject},
		{`{}`, MissingID},
		{`{"name":"a"}`, MissingID},
		{`{"Id":1,"name":"a"}`, MissingID},
		{`{"id":"1","name":"a"}`, NonIntegerID},
		{`{"id":null,"name":"a"}`, NonIntegerID},
		{`{"id":true,"name":"a"}`, NonIntegerID},
		{`{"id":[1],"name":"a"}`, NonIntegerID},
		{`{"id":1.5,"name":"a"}`, NonIntegerID},
		{`{"id":9007199254740992,"name":"a"}`, NonIntegerID},
		{`{"id":-9007199254740992,"name":"a"}`, NonIntegerID},
		{`{"id":1e300,"name":"a"}`, NonIntegerID},
		{`{"id":1}`, NoField},
		{`{"id":1,"args":{}}`, NoField},
		{`{"id":1,"name":5}`, NoField},
		{`{"id":1,"name":null}`, NoField},
		{`{"id":1,"Name":"a"}`, NoField},
		{`{"id":1,"Result":1}`, NoField},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.in))
		var v *Violation
		if !errors.As(err, &v) || v.Kind != c.kind {
			t.Errorf("Parse(%s) = %v, want violation %s", c.in, err, c.kind)
			continue
		}
		if !errors.Is(err, ErrViolation) {
			t.Errorf("Parse(%s): %v is not ErrViolation", c.in, err)
		}
	}
}

func TestParseRequests(t *testing.T) {
	cases := []struct {
		in   string
		want Message
	}{
		{`{"id":1,"name":"report/Daily","args":{"day":"mon"}}`,
			Message{Kind: KindRequest, ID: 1, Name: "report/Daily", Args: []byte(`{"day":"mon"}`)}},
		{`{"id":2,"name":"x"}`, Message{Kind: KindRequest, ID: 2, Name: "x", Args: []byte(`null`)}},
		{`{"id":3,"name":"x","args":null}`, Message{Kind: KindRequest, ID: 3, Name: "x", Args: []byte(`null`)}},
		{`{"id":4,"name":"","args":[1, 2]}`, Message{Kind: KindRequest, ID: 4, Name: "", Args: []byte(`[1, 2]`)}},
		{` {"args":7,"name":"\u00e9","id":5} `, Message{Kind: KindRequest, ID: 5, Name: "é", Args: []byte(`7`)}},
		// Integral spellings JS reads as integers.
		{`{"id":6.0,"name":"x"}`, Message{Kind: KindRequest, ID: 6, Name: "x", Args: []byte(`null`)}},
		{`{"id":7e2,"name":"x"}`, Message{Kind: KindRequest, ID: 700, Name: "x", Args: []byte(`null`)}},
		{`{"id":-0,"name":"x"}`, Message{Kind: KindRequest, ID: 0, Name: "x", Args: []byte(`null`)}},
		{`{"id":-9,"name":"x"}`, Message{Kind: KindRequest, ID: -9, Name: "x", Args: []byte(`null`)}},
		{`{"id":9007199254740991,"name":"x"}`, Message{Kind: KindRequest, ID: MaxID, Name: "x", Args: []byte(`null`)}},
		// A string name makes it a request whatever else it carries.
		{`{"id":8,"name":"x","result":1}`, Message{Kind: KindRequest, ID: 8, Name: "x", Args: []byte(`null`)}},
		// The last of a repeated key counts, as in JSON.parse.
		{`{"id":1,"id":9,"name":"x"}`, Message{Kind: KindRequest, ID: 9, Name: "x", Args: []byte(`null`)}},
	}
	for _, c := range cases {
		got, err := Parse([]byte(c.in))
		if err != nil {
			t.Errorf("Parse(%s): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%s)\n got %+v\nwant %+v", c.in, got, c.want)
		}
	}
}

func TestParseAnswers(t *testing.T) {
	cases := []struct {
		in   string
		want Message
	}{
		{`{"id":1,"result":null}`, Message{Kind: KindResult, ID: 1, Value: []byte(`null`)}},
		{`{"id":1,"result":{"a":1}}`, Message{Kind: KindResult, ID: 1, Value: []byte(`{"a":1}`)}},
		{`{"id":1,"progress":0.5}`, Message{Kind: KindProgress, ID: 1, Value: []byte(`0.5`)}},
		{`{"id":1,"name":3,"result":2}`, Message{Kind: KindResult, ID: 1, Value: []byte(`2`)}},
		// Precedence: result, then progress, then error.
		{`{"id":1,"error":{},"progress":1,"result":2}`, Message{Kind: KindResult, ID: 1, Value: []byte(`2`)}},
		{`{"id":1,"error":{},"progress":1}`, Message{Kind: KindProgress, ID: 1, Value: []byte(`1`)}},
		{`{"id":1,"error":{"reason":"refused","message":"no","reasons":[{"code":"c","message":"m"},{"code":1},"x"]}}`,
			Message{Kind: KindError, ID: 1, Error: &ErrorBody{Reason: "refused", Message: "no",
				Reasons: []admission.Reason{{Code: "c", Message: "m"}}}}},
		// Malformed errors are read leniently, as "failed".
		{`{"id":1,"error":{"reason":5}}`, Message{Kind: KindError, ID: 1, Error: &ErrorBody{Reason: "failed", Message: "failed"}}},
		{`{"id":1,"error":{"reason":"timeout"}}`, Message{Kind: KindError, ID: 1, Error: &ErrorBody{Reason: "timeout", Message: "timeout"}}},
		{`{"id":1,"error":"boom"}`, Message{Kind: KindError, ID: 1, Error: &ErrorBody{Reason: "failed", Message: `"boom"`}}},
		{`{"id":1,"error":null}`, Message{Kind: KindError, ID: 1, Error: &ErrorBody{Reason: "failed", Message: `null`}}},
	}
	for _, c := range cases {
		got, err := Parse([]byte(c.in))
		if err != nil {
			t.Errorf("Parse(%s): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%s)\n got %+v %+v\nwant %+v %+v", c.in, got, got.Error, c.want, c.want.Error)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"id":1,"name":"a","args":[1]}`, `{"id":2,"result":null}`,
		`{"id":3,"error":{"reason":"x","message":"y","reasons":[{"code":"c","message":"m"}]}}`, `[]`, `{"id":1e2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrViolation) {
				t.Fatalf("error %v is not a violation", err)
			}
			return
		}
		if m.ID > MaxID || m.ID < -MaxID {
			t.Fatalf("id %d out of range", m.ID)
		}
		// What was parsed re-encodes and parses to the same message.
		var out []byte
		switch m.Kind {
		case KindRequest:
			out, err = EncodeRequest(m.ID, m.Name, m.Args)
		case KindResult:
			out, err = EncodeResult(m.ID, m.Value)
		case KindProgress:
			out, err = EncodeProgress(m.ID, m.Value)
		case KindError:
			out = EncodeError(m.ID, *m.Error)
		default:
			t.Fatalf("kind %v", m.Kind)
		}
		if err != nil {
			t.Fatalf("re-encode %+v: %v", m, err)
		}
		back, err := Parse(out)
		if err != nil || back.Kind != m.Kind || back.ID != m.ID || back.Name != m.Name {
			t.Fatalf("round trip of %s via %s: %+v %v", b, out, back, err)
		}
	})
}
