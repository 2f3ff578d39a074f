package bridge_test

import (
	"testing"

	"github.com/weftgate/weftgate/bridge"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// Ids are the backend's and 0 is reserved: the refusal says what is wrong
// with the id, over real gRPC on 127.0.0.1.
func TestZeroIDsAreRefusedSayingWhy(t *testing.T) {
	e := startEnv(t, envOpts{})
	a := openBackend(t, e, "a", 0)
	r := a.claim(0, prefix("x"), 0, kAccept)
	if r.Granted || len(r.Reasons) != 1 || r.Reasons[0].Code != string(bridge.ReasonInvalidClaim) || r.Reasons[0].Message != "claim_id must not be 0" {
		t.Fatalf("claim 0: %v, want refused %s, \"claim_id must not be 0\"", r, bridge.ReasonInvalidClaim)
	}
	a.send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Write{Write: &v1.Write{WriteId: 0}}})
	for {
		ack := a.nextCtl().GetWriteAck()
		if ack == nil {
			continue
		}
		res := ack.GetResult()
		if ack.WriteId != 0 || res.GetStatus() != v1.WriteStatus_WRITE_STATUS_REFUSED || len(res.GetReasons()) != 1 ||
			res.Reasons[0].Code != string(bridge.ReasonInvalidWrite) || res.Reasons[0].Message != "write_id must not be 0" {
			t.Fatalf("write 0: %v, want refused %s, \"write_id must not be 0\"", ack, bridge.ReasonInvalidWrite)
		}
		break
	}
}
