package apicheck

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// The service's shape is the contract backends code against: eight methods,
// one bidirectional stream, one server stream, six unary calls (two of them
// the operator's).
func TestServiceShape(t *testing.T) {
	svc := v1.File_weftgate_v1_gateway_proto.Services().ByName("GatewayService")
	if svc == nil {
		t.Fatal("no GatewayService")
	}
	want := map[protoreflect.Name][2]bool{ // client streams, server streams
		"Authority":     {true, true},
		"Subscribe":     {false, true},
		"GetState":      {false, false},
		"WriteCommit":   {false, false},
		"ReplaceState":  {false, false},
		"ListDocuments": {false, false},
		// The operator's calls.
		"DeleteDocument": {false, false},
		"EndLinks":       {false, false},
	}
	methods := svc.Methods()
	if methods.Len() != len(want) {
		t.Errorf("GatewayService has %d methods, want %d", methods.Len(), len(want))
	}
	for name, streams := range want {
		m := methods.ByName(name)
		if m == nil {
			t.Errorf("no method %s", name)
			continue
		}
		if got := [2]bool{m.IsStreamingClient(), m.IsStreamingServer()}; got != streams {
			t.Errorf("%s streams (client, server) = %v, want %v", name, got, streams)
		}
	}
	if got := v1.GatewayService_ServiceDesc.ServiceName; got != "weftgate.v1.GatewayService" {
		t.Errorf("service name %q", got)
	}
}

// Every question kind has an answer of the same name, so a backend can
// dispatch on one and build the other.
func TestEveryQuestionHasAnAnswer(t *testing.T) {
	q := (&v1.Question{}).ProtoReflect().Descriptor().Oneofs().ByName("kind")
	a := (&v1.Answer{}).ProtoReflect().Descriptor().Oneofs().ByName("kind")
	for i := 0; i < q.Fields().Len(); i++ {
		name := q.Fields().Get(i).Name()
		if a.Fields().ByName(name) == nil {
			t.Errorf("question kind %s has no answer field", name)
		}
	}
	// The enum a claim names kinds with covers the same set.
	kinds := v1.QuestionKind(0).Descriptor().Values()
	if got, want := kinds.Len()-1, q.Fields().Len(); got != want {
		t.Errorf("QuestionKind has %d kinds, Question has %d", got, want)
	}
}
