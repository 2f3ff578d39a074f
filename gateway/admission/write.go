package admission

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
)

// body is the JSON a refusal is answered with.
type body struct {
	Reasons []Reason `json:"reasons"`
}

// WriteRefusal answers ref as plain HTTP: its status, Retry-After when set,
// and {"reasons":[...]} as application/json. Nothing else is written, so
// the connection is never upgraded. A nil ref, or one with a status that is
// not an HTTP error, is written as 403.
func WriteRefusal(w http.ResponseWriter, ref *Refusal) {
	if ref == nil {
		ref = &Refusal{}
	}
	reasons := ref.Reasons
	if reasons == nil {
		reasons = []Reason{}
	}
	b, err := json.Marshal(body{Reasons: reasons})
	if err != nil { // unreachable: strings always marshal
		b = []byte(`{"reasons":[]}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if ref.RetryAfter > 0 {
		h.Set("Retry-After", strconv.FormatInt(int64(math.Ceil(ref.RetryAfter.Seconds())), 10))
	}
	h.Set("Content-Length", strconv.Itoa(len(b)))
	status := ref.Status
	if status < 400 || status > 599 {
		status = http.StatusForbidden
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
