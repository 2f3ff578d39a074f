package document

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

func TestJSONShape(t *testing.T) {
	d := newDoc(t, cm(
		add(1, okey("l"), attach(commit.Array, 2)),
		add(2, apos("4001"), text("<b>")),
		add(1, okey("m"), attach(commit.Map, 3)),
		add(3, mkey(9), commit.BytesValue([]byte{1, 2})),
		add(1, okey("see"), alias(commit.Object, 4)),
		add(1, okey("gone"), attach(commit.Object, 5)),
		add(5, okey("x"), commit.FloatValue(0.5)),
	))
	mustApply(t, d, cm(rem(1, okey("gone"))))
	got, err := d.MarshalJSON() // json.Marshal would escape <, > and & again
	if err != nil {
		t.Fatal(err)
	}
	want := `{"root":"AAAAAAAAAAAAAAAB","observables":{` +
		`"AAAAAAAAAAAAAAAB":{"kind":"object","slots":{"l":{"ref":"AAAAAAAAAAAAAAAC","kind":"array","edge":"attach"},"m":{"ref":"AAAAAAAAAAAAAAAD","kind":"map","edge":"attach"},"see":{"ref":"AAAAAAAAAAAAAAAE","kind":"object","edge":"alias"}}},` +
		`"AAAAAAAAAAAAAAAC":{"kind":"array","slots":{"4001":"<b>"}},` +
		`"AAAAAAAAAAAAAAAD":{"kind":"map","slots":{"AAAAAAAAAAAAAAAJ":{"bytes":"0102"}}}}}`
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	// Reading it back, through the zero Document too.
	var back Document
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, &back)
	if !sameSnapshot(t, back.Snapshot(), d.Snapshot()) || back.Limits() != (Limits{}).withDefaults() {
		t.Fatalf("read back differs")
	}
	// An alias-only observable is held, with its kind, and stays detached.
	if k, ok := back.Kind(id(4)); !ok || k != commit.Object || back.Reachable(id(4)) {
		t.Fatalf("alias target %v %v", k, ok)
	}
}

func TestJSONDetachedHeld(t *testing.T) {
	in := `{"root":"AAAAAAAAAAAAAAAB","observables":{"AAAAAAAAAAAAAAAB":{"kind":"object","slots":{}},` +
		`"AAAAAAAAAAAAAAAC":{"kind":"object","slots":{"x":1}}}}`
	d, err := ParseJSON([]byte(in), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Observables() != 2 || d.Reachable(id(2)) || d.Slots() != 1 {
		t.Fatalf("held %d, reachable %v", d.Observables(), d.Reachable(id(2)))
	}
	mustApply(t, d, cm(add(1, okey("a"), attach(commit.Object, 2))))
	if v, _ := d.Get(id(2), okey("x")); v != commit.IntValue(1) {
		t.Fatalf("reattached slot %v", v)
	}
}

func TestJSONRefusals(t *testing.T) {
	doc := func(obs string) string { return `{"root":"AAAAAAAAAAAAAAAB","observables":{` + obs + `}}` }
	root := func(slots string) string { return `"AAAAAAAAAAAAAAAB":{"kind":"object","slots":{` + slots + `}}` }
	ref := func(edge, kind string, n string) string {
		return `{"ref":"AAAAAAAAAAAAAAA` + n + `","kind":"` + kind + `","edge":"` + edge + `"}`
	}
	cases := []struct {
		name, in string
		reason   protocol.Reason
	}{
		{"kind conflict", doc(root(`"a":`+ref("attach", "array", "C")) + `,"AAAAAAAAAAAAAAAC":{"kind":"map","slots":{}}`), protocol.KindConflict},
		{"two references disagree", doc(root(`"a":` + ref("alias", "array", "C") + `,"b":` + ref("alias", "map", "C"))), protocol.KindConflict},
		{"two attach edges", doc(root(`"a":` + ref("attach", "map", "C") + `,"b":` + ref("attach", "map", "C"))), protocol.MultipleAttach},
		{"attached root", doc(root(`"a":` + ref("attach", "object", "B"))), protocol.MultipleAttach},
		{"bad position", doc(root(`"a":`+ref("attach", "array", "C")) + `,"AAAAAAAAAAAAAAAC":{"kind":"array","slots":{"4000":1}}`), protocol.InvalidPosition},
		{"not hex", doc(root(`"a":`+ref("attach", "array", "C")) + `,"AAAAAAAAAAAAAAAC":{"kind":"array","slots":{"zz":1}}`), protocol.InvalidPosition},
		{"bad map key", doc(root(`"a":`+ref("attach", "map", "C")) + `,"AAAAAAAAAAAAAAAC":{"kind":"map","slots":{"short":1}}`), protocol.InvalidID},
		{"bad id", doc(root(``) + `,"nope":{"kind":"map","slots":{}}`), protocol.InvalidID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseJSON([]byte(tc.in), Limits{})
			if got := protocol.ReasonOf(err); got != tc.reason {
				t.Fatalf("reason %q (%v), want %s", got, err, tc.reason)
			}
		})
	}
	for _, in := range []string{`{`, `{"root":"AAAAAAAAAAAAAAAB","observables":{}}`, doc(root(`"a":[1]`))} {
		if _, err := ParseJSON([]byte(in), Limits{}); err == nil {
			t.Fatalf("%s read", in)
		}
	}
	big := doc(root(`"a":1,"b":2,"c":` + ref("alias", "map", "C") + `,"d":` + ref("alias", "map", "D")))
	if _, err := ParseJSON([]byte(big), Limits{MaxSlots: 3}); protocol.ReasonOf(err) != protocol.TooManySlots {
		t.Fatalf("slots limit: %v", err)
	}
	if _, err := ParseJSON([]byte(big), Limits{MaxObservables: 2}); protocol.ReasonOf(err) != protocol.TooManyObservables {
		t.Fatalf("observables limit: %v", err)
	}
	if !strings.Contains(big, "alias") {
		t.Fatal("unreachable")
	}
}
