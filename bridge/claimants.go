package bridge

import "slices"

// Claimants names the backends holding a claim whose pattern matches the
// document name, in the order the claims were granted, each once: who
// answers for the document (for an operator's view; it asks nothing).
func (s *Server) Claimants(name string) []string {
	r := s.router
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []string{}
	for _, c := range r.claims {
		if c.pat.match(name) && !slices.Contains(out, c.st.backend) {
			out = append(out, c.st.backend)
		}
	}
	return out
}
