package store

// reqKind is what a queued request asks of the writer.
type reqKind uint8

const (
	reqAppend reqKind = iota
	reqSnapshot
	reqProbe
	reqDelete // alone in its transaction: see writer.handle
)

// request is one caller's write, queued for the writer. The caller blocks on
// done, which the writer answers exactly once.
type request struct {
	kind  reqKind
	doc   string
	recs  []Record
	snap  Snapshot
	bytes int   // commit or state bytes, for batch bounds
	err   error // outcome, staged by the writer until the batch commits
	done  chan error
}

func newRequest(k reqKind, doc string) *request {
	return &request{kind: k, doc: doc, done: make(chan error, 1)}
}

func (r *request) count() int {
	if r.kind == reqAppend {
		return len(r.recs)
	}
	return 1
}

func (r *request) reply(err error) {
	r.done <- err
}
