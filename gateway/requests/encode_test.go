package requests

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/weftgate/weftgate/gateway/admission"
)

func TestEncode(t *testing.T) {
	must := func(b []byte, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	cases := []struct{ got, want string }{
		{must(EncodeResult(1, json.RawMessage(`{"a":[1,2]}`))), `{"id":1,"result":{"a":[1,2]}}`},
		{must(EncodeResult(2, nil)), `{"id":2,"result":null}`},
		{must(EncodeResult(-3, json.RawMessage(`"s"`))), `{"id":-3,"result":"s"}`},
		{must(EncodeProgress(4, json.RawMessage(`0.25`))), `{"id":4,"progress":0.25}`},
		{must(EncodeProgress(5, nil)), `{"id":5,"progress":null}`},
		{string(EncodeError(6, ErrorBody{Reason: "failed", Message: "the call failed"})),
			`{"id":6,"error":{"reason":"failed","message":"the call failed"}}`},
		{string(EncodeError(7, ErrorBody{Reason: "refused", Message: "the call was refused",
			Reasons: []admission.Reason{{Code: "no-role", Message: "editors only"}}})),
			`{"id":7,"error":{"reason":"refused","message":"the call was refused","reasons":[{"code":"no-role","message":"editors only"}]}}`},
		{must(EncodeRequest(8, "report/Daily", json.RawMessage(`{"day":"mon"}`))), `{"id":8,"name":"report/Daily","args":{"day":"mon"}}`},
		{must(EncodeRequest(9, `a"b`, nil)), `{"id":9,"name":"a\"b","args":null}`},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
	}
	for _, bad := range []string{`{`, `1 2`, `undefined`, `NaN`} {
		if _, err := EncodeResult(1, json.RawMessage(bad)); !errors.Is(err, ErrNotData) {
			t.Errorf("EncodeResult(%s): %v, want ErrNotData", bad, err)
		}
		if _, err := EncodeProgress(1, json.RawMessage(bad)); !errors.Is(err, ErrNotData) {
			t.Errorf("EncodeProgress(%s): %v, want ErrNotData", bad, err)
		}
		if _, err := EncodeRequest(1, "x", json.RawMessage(bad)); !errors.Is(err, ErrNotData) {
			t.Errorf("EncodeRequest(%s): %v, want ErrNotData", bad, err)
		}
	}
}
