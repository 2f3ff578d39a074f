package gateway

import "testing"

// A pass wakes the members in the order they joined; the ones that left
// drop out of that order at the next pass, and may join again once.
func TestPruneOrderKeepsTheJoinOrder(t *testing.T) {
	ms := make([]*member, 5)
	h := &hub{members: map[*conn]*member{}}
	for i := range ms {
		ms[i] = &member{c: &conn{}, ordered: true}
		h.members[ms[i].c] = ms[i]
		h.order = append(h.order, ms[i])
	}
	delete(h.members, ms[1].c)
	delete(h.members, ms[3].c)
	h.members[ms[3].c] = &member{c: ms[3].c} // the same link, joined again as a new member
	h.pruneOrder()
	want := []*member{ms[0], ms[2], ms[4]}
	if len(h.order) != len(want) {
		t.Fatalf("order has %d members, want %d", len(h.order), len(want))
	}
	for i := range want {
		if h.order[i] != want[i] {
			t.Fatalf("order[%d] is not the member that joined %d-th", i, i)
		}
	}
	if ms[1].ordered || ms[3].ordered || !ms[0].ordered {
		t.Fatal("ordered not cleared for exactly the members dropped")
	}
}
