package frame_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/weftgate/weftgate/internal/spectest"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
	"github.com/weftgate/weftgate/protocol/wire"
)

// fixture is one file of spec/frames (INDEX.md section 5).
type fixture struct {
	Note   string          `json:"note"`
	Frame  json.RawMessage `json:"frame"`
	Wire   json.RawMessage `json:"wire"`
	Bytes  string          `json:"bytes"`
	Reason string          `json:"reason"`
}

func loadFixture(t testing.TB, path string) (fixture, []byte) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fx fixture
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := hex.DecodeString(fx.Bytes)
	if err != nil {
		t.Fatalf("%s: bytes: %v", path, err)
	}
	return fx, b
}

func TestFixtures(t *testing.T) {
	files := spectest.Files(t, "frames")
	var valid, invalid int
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		fx, want := loadFixture(t, path)
		if strings.HasPrefix(name, "invalid-") {
			invalid++
			t.Run(name, func(t *testing.T) { checkInvalid(t, fx, want) })
			continue
		}
		valid++
		t.Run(name, func(t *testing.T) { checkValid(t, fx, want) })
	}
	// INDEX.md section 5: 10 valid and 20 invalid.
	if valid != 10 || invalid != 20 {
		t.Fatalf("found %d valid and %d invalid frame fixtures, want 10 and 20", valid, invalid)
	}
}

func checkValid(t *testing.T, fx fixture, want []byte) {
	wireForm := encodeWire(t, fx.Wire)
	if !bytes.Equal(wireForm, want) {
		t.Errorf("wire form encodes to %x, want %x", wireForm, want)
	}
	built := buildFrame(t, fx.Frame, fx.Wire)
	enc, err := frame.Encode(built)
	if err != nil {
		t.Fatalf("Encode(frame form): %v", err)
	}
	if !bytes.Equal(enc, want) {
		t.Errorf("frame form encodes to %x, want %x", enc, want)
	}
	got, err := frame.Decode(want)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if !reflect.DeepEqual(got, built) {
		t.Errorf("Decode = %+v, want %+v", got, built)
	}
	again, err := frame.Encode(got)
	if err != nil {
		t.Fatalf("re-Encode: %v", err)
	}
	if !bytes.Equal(again, want) {
		t.Errorf("re-encoded to %x, want %x", again, want)
	}
	prefix := []byte{0xaa}
	app, err := frame.Append(prefix, got)
	if err != nil || !bytes.Equal(app, append([]byte{0xaa}, want...)) {
		t.Errorf("Append = %x, %v; want aa%x", app, err, want)
	}
}

func checkInvalid(t *testing.T, fx fixture, b []byte) {
	if fx.Reason == "" {
		t.Fatal("invalid fixture has no reason")
	}
	f, err := frame.Decode(b)
	if err == nil {
		t.Fatalf("Decode accepted %x as %+v; want %s", b, f, fx.Reason)
	}
	if got := protocol.ReasonOf(err); got != protocol.Reason(fx.Reason) {
		t.Fatalf("Decode reason %q (%v), want %q", got, err, fx.Reason)
	}
	var bad *frame.BadFrameError
	if !errors.As(err, &bad) || bad.Message == "" {
		t.Fatalf("Decode error %v is not a *BadFrameError with a message", err)
	}
}

// encodeWire writes the fixture's JSON array form with the wire Append
// functions: numbers, text, booleans, null, arrays and {"hex": ...} bytes.
func encodeWire(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("wire: %v", err)
	}
	return appendJSON(t, nil, v)
}

func appendJSON(t *testing.T, b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return wire.AppendNull(b)
	case bool:
		return wire.AppendBool(b, v)
	case string:
		return wire.AppendText(b, v)
	case json.Number:
		i, err := v.Int64()
		if err != nil {
			t.Fatalf("wire: number %s is not an integer", v)
		}
		return wire.AppendInt(b, i)
	case []any:
		b = wire.AppendArray(b, len(v))
		for _, e := range v {
			b = appendJSON(t, b, e)
		}
		return b
	case map[string]any:
		h, ok := v["hex"].(string)
		if !ok || len(v) != 1 {
			t.Fatalf("wire: object %v is not {\"hex\": ...}", v)
		}
		return wire.AppendBytes(b, mustHex(t, h))
	}
	t.Fatalf("wire: unexpected %T", v)
	return nil
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("hex %q: %v", s, err)
	}
	return b
}

// frameForm is the fixture's named-field object (INDEX.md section 5).
type frameForm struct {
	Kind  string `json:"kind"`
	Topic uint64 `json:"topic"`
	Name  string `json:"name"`
	Root  *struct {
		ID   string `json:"id"`
		Kind string `json:"kind"`
	} `json:"root"`
	Want    bool              `json:"want"`
	Commit  json.RawMessage   `json:"commit"`
	First   uint64            `json:"first"`
	Commits []json.RawMessage `json:"commits"`
	Seq     uint64            `json:"seq"`
	Reasons []struct {
		Code    string    `json:"code"`
		Message string    `json:"message"`
		Path    *[]string `json:"path"`
	} `json:"reasons"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

var kinds = map[string]frame.Kind{
	"open": frame.Open, "state": frame.State, "commits": frame.Commits,
	"refused": frame.Refused, "leave": frame.Leave, "fault": frame.Fault,
}

var rootKinds = map[string]commit.Kind{"object": commit.Object, "array": commit.Array, "map": commit.Map}

// buildFrame builds a Frame from the object form. Commits there are given as
// deltas; their bytes are taken from the wire form (the fixtures compare
// commits by bytes, and protocol/commit checks the deltas themselves).
func buildFrame(t *testing.T, rawFrame, rawWire json.RawMessage) frame.Frame {
	t.Helper()
	var ff frameForm
	if err := json.Unmarshal(rawFrame, &ff); err != nil {
		t.Fatalf("frame: %v", err)
	}
	var w []json.RawMessage
	if err := json.Unmarshal(rawWire, &w); err != nil {
		t.Fatalf("wire: %v", err)
	}
	k, ok := kinds[ff.Kind]
	if !ok {
		t.Fatalf("frame: unknown kind %q", ff.Kind)
	}
	f := frame.Frame{Kind: k, Topic: ff.Topic}
	switch k {
	case frame.Open:
		f.Name, f.Want = ff.Name, ff.Want
		if ff.Root != nil {
			rk, ok := rootKinds[ff.Root.Kind]
			if !ok {
				t.Fatalf("frame: root kind %q", ff.Root.Kind)
			}
			r := &frame.Root{Kind: rk}
			if copy(r.ID[:], mustHex(t, ff.Root.ID)) != len(r.ID) {
				t.Fatalf("frame: root id %q is not 12 bytes", ff.Root.ID)
			}
			f.Root = r
		}
	case frame.State:
		if ff.Commit != nil {
			f.State = wireBytes(t, w[2])
		}
	case frame.Commits:
		f.First = ff.First
		var cs []json.RawMessage
		if err := json.Unmarshal(w[3], &cs); err != nil {
			t.Fatalf("wire commits: %v", err)
		}
		if len(cs) != len(ff.Commits) {
			t.Fatalf("frame has %d commits, wire %d", len(ff.Commits), len(cs))
		}
		for _, c := range cs {
			f.Commits = append(f.Commits, wireBytes(t, c))
		}
	case frame.Refused:
		f.Seq = ff.Seq
		for _, r := range ff.Reasons {
			fr := frame.Reason{Code: r.Code, Message: r.Message}
			if r.Path != nil {
				fr.Path = *r.Path
			}
			f.Reasons = append(f.Reasons, fr)
		}
	case frame.Fault:
		f.Reason, f.Message = ff.Reason, ff.Message
	}
	return f
}

func wireBytes(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var h struct {
		Hex string `json:"hex"`
	}
	if err := json.Unmarshal(raw, &h); err != nil || h.Hex == "" {
		t.Fatalf("wire: %s is not {\"hex\": ...}", raw)
	}
	return mustHex(t, h.Hex)
}
