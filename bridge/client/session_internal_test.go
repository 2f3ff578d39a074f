package client

import (
	"context"
	"io"
	"strings"
	"testing"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// sentStream records what sendLoop writes.
type sentStream struct {
	grpc.BidiStreamingClient[v1.AuthorityRequest, v1.AuthorityResponse]
	sent       []*v1.AuthorityRequest
	halfClosed bool
}

func (s *sentStream) Send(m *v1.AuthorityRequest) error { s.sent = append(s.sent, m); return nil }
func (s *sentStream) CloseSend() error                  { s.halfClosed = true; return nil }
func (s *sentStream) Recv() (*v1.AuthorityResponse, error) {
	return nil, io.EOF
}

func testSession(t *testing.T, budget, inFlight int) (*session, *sentStream) {
	t.Helper()
	o, err := Options{MaxInFlight: inFlight, MaxSendMessageBytes: budget}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{opts: o}
	a := newAuthority(c)
	st := &sentStream{}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return newSession(a, st, ctx, cancel, &v1.Welcome{}), st
}

func accepted(id uint64) *v1.Answer {
	return &v1.Answer{QuestionId: id, Kind: &v1.Answer_Accept{Accept: &v1.AcceptAnswer{Accepted: true}}}
}

// Answers waiting together leave in one message, up to
// MaxAnswersPerMessage and the byte budget.
func TestSendLoopBatches(t *testing.T) {
	s, st := testSession(t, DefaultMaxMessageBytes, MaxAnswersPerMessage+10)
	for i := range MaxAnswersPerMessage + 10 {
		s.answers <- accepted(uint64(i + 1))
	}
	s.halfClose()
	s.sendLoop()
	if len(st.sent) != 2 || len(st.sent[0].GetAnswers().GetAnswers()) != MaxAnswersPerMessage || len(st.sent[1].GetAnswers().GetAnswers()) != 10 {
		t.Fatalf("sent %d messages (%v)", len(st.sent), sizes(st.sent))
	}
	if !st.halfClosed {
		t.Fatal("the half-close was not sent")
	}
	// In order, none lost.
	n := uint64(0)
	for _, m := range st.sent {
		for _, a := range m.GetAnswers().GetAnswers() {
			n++
			if a.GetQuestionId() != n {
				t.Fatalf("answer %d is question %d", n, a.GetQuestionId())
			}
		}
	}
}

// bigAnswer is an answer of about 300 bytes.
func bigAnswer(id uint64) *v1.Answer {
	return &v1.Answer{QuestionId: id, Kind: &v1.Answer_Failure{Failure: &v1.Failure{Message: strings.Repeat("x", 300)}}}
}

func TestSendLoopSplitsByBytes(t *testing.T) {
	budget := 1000
	s, st := testSession(t, budget, 8)
	for i := range 6 {
		s.answers <- bigAnswer(uint64(i + 1))
	}
	s.halfClose()
	s.sendLoop()
	total := 0
	for _, m := range st.sent {
		if n := proto.Size(m); n > budget {
			t.Fatalf("a message of %d bytes, over the %d budget", n, budget)
		}
		total += len(m.GetAnswers().GetAnswers())
	}
	if total != 6 || len(st.sent) < 2 {
		t.Fatalf("%d answers in %d messages", total, len(st.sent))
	}
}

// An answer too big for any message becomes a Failure saying so.
func TestOversizedAnswerFails(t *testing.T) {
	s, _ := testSession(t, 200, 4)
	s.push(&v1.Answer{QuestionId: 7, Kind: &v1.Answer_Failure{Failure: &v1.Failure{Message: strings.Repeat("y", 500)}}})
	a := <-s.answers
	if a.GetQuestionId() != 7 || !strings.Contains(a.GetFailure().GetMessage(), "message bound") {
		t.Fatalf("got %v", a)
	}
}

// Writes enqueued before a half-close still leave, before it.
func TestHalfCloseFlushesWrites(t *testing.T) {
	s, st := testSession(t, DefaultMaxMessageBytes, 4)
	s.out <- &v1.AuthorityRequest{Message: &v1.AuthorityRequest_Write{Write: &v1.Write{WriteId: 1}}}
	s.halfClose()
	s.sendLoop()
	if len(st.sent) != 1 || st.sent[0].GetWrite().GetWriteId() != 1 || !st.halfClosed {
		t.Fatalf("sent %v, half-closed %v", st.sent, st.halfClosed)
	}
}

func sizes(ms []*v1.AuthorityRequest) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = len(m.GetAnswers().GetAnswers())
	}
	return out
}

// Answers judged inline leave straight from the receive loop, as few
// messages as MaxAnswersPerMessage and the byte budget allow, each under
// the budget, in order, none lost; an oversized one becomes a Failure;
// after the half-close nothing more is sent.
func TestInlineAnswersSplitByBytesAndCount(t *testing.T) {
	budget := 1000
	s, st := testSession(t, budget, 8)
	for i := range 6 {
		s.inlined = append(s.inlined, s.fit(bigAnswer(uint64(i+1))))
	}
	s.inlined = append(s.inlined, s.fit(&v1.Answer{QuestionId: 7, Kind: &v1.Answer_Failure{Failure: &v1.Failure{Message: strings.Repeat("y", 2000)}}}))
	s.sendInlined()
	n := uint64(0)
	for _, m := range st.sent {
		if size := proto.Size(m); size > budget {
			t.Fatalf("a message of %d bytes, over the %d budget", size, budget)
		}
		for _, a := range m.GetAnswers().GetAnswers() {
			n++
			if a.GetQuestionId() != n {
				t.Fatalf("answer %d is question %d", n, a.GetQuestionId())
			}
			if n == 7 && !strings.Contains(a.GetFailure().GetMessage(), "message bound") {
				t.Fatalf("the oversized answer went as %v", a)
			}
		}
	}
	if n != 7 || len(st.sent) < 3 || len(s.inlined) != 0 {
		t.Fatalf("%d answers in %d messages, %d left", n, len(st.sent), len(s.inlined))
	}

	s2, st2 := testSession(t, DefaultMaxMessageBytes, 8)
	for i := range MaxAnswersPerMessage + 1 {
		s2.inlined = append(s2.inlined, accepted(uint64(i+1)))
	}
	s2.sendInlined()
	if len(st2.sent) != 2 || len(st2.sent[0].GetAnswers().GetAnswers()) != MaxAnswersPerMessage {
		t.Fatalf("sent %v", sizes(st2.sent))
	}
	s2.halfClose()
	s2.sendLoop()
	s2.inlined = append(s2.inlined, accepted(999))
	s2.sendInlined()
	if len(st2.sent) != 2 || !st2.halfClosed {
		t.Fatalf("after the half-close: %d messages, half-closed %v", len(st2.sent), st2.halfClosed)
	}
}
