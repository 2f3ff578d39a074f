package gateway

import "testing"

// The tail keeps a commit's paths only for a subscriber: with none, the
// authority's paths are let go once it has judged the commit.
func TestTheTailKeepsPathsOnlyForSubscribers(t *testing.T) {
	h := &hub{subs: map[*subscriber]struct{}{}}
	a := &applied{paths: [][]string{{"k"}, nil}}
	a.rec.Origin = "link-1"
	if it := h.tailItemOf(a); it.paths != nil || it.origin != "link-1" || it.link {
		t.Fatalf("with no subscriber the tail keeps %+v, want the origin and no paths", it)
	}
	h.subs[&subscriber{}] = struct{}{}
	if it := h.tailItemOf(a); len(it.paths) != 2 || it.paths[0][0] != "k" || it.paths[1] != nil {
		t.Fatalf("with a subscriber the tail keeps paths %q, want the authority's", it.paths)
	}
}
