package apicheck

import (
	"testing"

	"google.golang.org/protobuf/proto"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// roundTrip marshals m, unmarshals it into a fresh message of its type, and
// fails unless the two are equal.
func roundTrip[M proto.Message](t *testing.T, m M) M {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatalf("marshal %T: %v", m, err)
	}
	out := m.ProtoReflect().New().Interface().(M)
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatalf("unmarshal %T: %v", m, err)
	}
	if !proto.Equal(m, out) {
		t.Fatalf("%T changed in a round trip:\n in: %v\nout: %v", m, m, out)
	}
	return out
}

func TestQuestionsRoundTrip(t *testing.T) {
	m := &v1.AuthorityResponse{Message: &v1.AuthorityResponse_Questions{Questions: &v1.Questions{
		Questions: []*v1.Question{acceptQuestion(1), acceptQuestion(2)},
	}}}
	out := roundTrip(t, m)

	q := out.GetQuestions().GetQuestions()[0].GetAccept()
	if q == nil {
		t.Fatal("the accept oneof did not survive")
	}
	deltas := q.GetCommit().GetDeltas()
	values := everyValue()
	for i, want := range values {
		if got := deltas[i].GetValue(); !proto.Equal(got, want) {
			t.Errorf("value %d: got %v, want %v", i, got, want)
		}
	}
	// A remove has no value and, here, no path: absent must stay absent,
	// distinct from the root's empty path.
	last := deltas[len(deltas)-1]
	if last.GetValue() != nil || last.GetPath() != nil {
		t.Errorf("remove: value %v path %v, want both unset", last.GetValue(), last.GetPath())
	}
	if got := q.GetOrigin().GetPeer().GetIdentity().GetClaims()["tenant"]; got != "acme" {
		t.Errorf("claims[tenant] = %q, want acme", got)
	}
}

// An empty path (the root's) and an unset path differ on the wire.
func TestRootPathIsNotNoPath(t *testing.T) {
	r := roundTrip(t, &v1.Reason{Code: "slot-exists", Path: &v1.Path{}})
	if r.GetPath() == nil {
		t.Error("the root's empty path came back unset")
	}
	r = roundTrip(t, &v1.Reason{Code: "unreachable"})
	if r.GetPath() != nil {
		t.Errorf("an unset path came back as %v", r.GetPath())
	}
}

// expected_cursor 0 ("no commit yet") is a compare-and-swap, unlike unset.
func TestExpectedCursorPresence(t *testing.T) {
	zero := uint64(0)
	got := roundTrip(t, &v1.WriteCommitRequest{
		Document:       "board:42",
		Commit:         &v1.Commit{Encoded: []byte{0x81, 0x81}},
		ExpectedCursor: &zero,
		CreateRoot:     &v1.Root{Id: id(1), Kind: v1.Kind_KIND_OBJECT},
		Writer:         "importer",
	})
	if got.ExpectedCursor == nil || *got.ExpectedCursor != 0 {
		t.Fatalf("expected_cursor 0 came back as %v", got.ExpectedCursor)
	}
	got = roundTrip(t, &v1.WriteCommitRequest{Document: "board:42"})
	if got.ExpectedCursor != nil {
		t.Fatalf("unset expected_cursor came back as %d", *got.ExpectedCursor)
	}
}

func TestAnswersAndWritesRoundTrip(t *testing.T) {
	roundTrip(t, &v1.AuthorityRequest{Message: &v1.AuthorityRequest_Answers{Answers: &v1.Answers{Answers: []*v1.Answer{
		{QuestionId: 2, Kind: &v1.Answer_Accept{Accept: &v1.AcceptAnswer{
			Reasons: []*v1.Reason{{Code: "read-only", Message: "not yours", Path: path("title")}},
		}}},
		{QuestionId: 1, Kind: &v1.Answer_Accept{Accept: &v1.AcceptAnswer{Accepted: true}}},
		{QuestionId: 3, Kind: &v1.Answer_Load{Load: &v1.LoadAnswer{
			Found:  true,
			Cursor: 1200,
			State:  &v1.DocumentState{Root: &v1.Root{Id: id(1), Kind: v1.Kind_KIND_MAP}, Commit: commitWithEveryValue()},
		}}},
		{QuestionId: 4, Kind: &v1.Answer_CallProgress{CallProgress: &v1.CallProgress{ProgressJson: `{"done":1}`}}},
		{QuestionId: 4, Kind: &v1.Answer_Call{Call: &v1.CallAnswer{Outcome: &v1.CallAnswer_ResultJson{ResultJson: "null"}}}},
		{QuestionId: 5, Kind: &v1.Answer_Failure{Failure: &v1.Failure{Message: "store down"}}},
	}}}})

	roundTrip(t, &v1.AuthorityRequest{Message: &v1.AuthorityRequest_Write{Write: &v1.Write{
		WriteId: 8,
		Change: &v1.Write_State{State: &v1.StateWrite{
			Document: "board:42",
			State:    &v1.DocumentState{Root: &v1.Root{Id: id(1), Kind: v1.Kind_KIND_OBJECT}},
			Label:    "nightly-reset",
		}},
	}}})
}

func TestSubscribeEventsRoundTrip(t *testing.T) {
	for _, m := range []*v1.SubscribeResponse{
		{Event: &v1.SubscribeResponse_Snapshot{Snapshot: &v1.SnapshotEvent{
			Document: "board:42",
			Cursor:   40,
			State:    &v1.DocumentState{Root: &v1.Root{Id: id(1), Kind: v1.Kind_KIND_OBJECT}},
			Reason:   v1.SnapshotReason_SNAPSHOT_REASON_EXPIRED,
		}}},
		{Event: &v1.SubscribeResponse_Commit{Commit: &v1.CommitEvent{
			Document: "board:42",
			Cursor:   41,
			Origin: &v1.Origin{Source: &v1.Origin_Backend{Backend: &v1.BackendOrigin{
				Name: "importer", StreamId: 3, WriteId: 8, Label: "run-7",
			}}},
			Commit: commitWithEveryValue(),
		}}},
		{Event: &v1.SubscribeResponse_CaughtUp{CaughtUp: &v1.CaughtUp{}}},
	} {
		out := roundTrip(t, m)
		if out.GetEvent() == nil {
			t.Errorf("%v lost its event", m)
		}
	}
}
