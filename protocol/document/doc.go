// Package document is the aweft document model of format.md sections 1 to
// 5 and the apply stage of section 7: a root observable and the objects,
// arrays and maps it holds, each with slots of commit.Values, where attach
// references form a tree under the root and aliases make it a graph.
//
// Apply validates a whole commit against the document, then applies all
// of it or none, and returns its inverse; Update does the same for a
// replica that needs no inverse. Snapshot writes the state as one
// commit of adds; Reconcile moves the document in place to a peer's state.
// Path and Paths give the attach path of an observable or of each delta.
// MarshalJSON and ParseJSON are the fixtures' JSON view. Limits bound what
// one document holds.
//
// Detached observables (their attach slot removed) stay held with their
// slots and their kind, so an id survives a detach and a reattach
// (identity.md section 1), as in the aweft client; Compact drops them.
// Every observable has at most one attach edge anywhere, detached ones
// included, so reattaching a subtree can never give anything two homes.
//
// Refusal precedence. A commit is refused, in this order, for:
//
//  1. a malformed delta (hand-built commits only; the decode-stage reason a
//     decoder would give) or two deltas on one slot; checking stops here;
//  2. kind-conflict: two mentions of one id disagree (a ref addressing it,
//     a reference naming it, the kind it has);
//  3. multiple-attach: two attach edges to one observable, an attach to an
//     observable already attached when the commit does not remove or
//     overwrite that slot, or an attach to the root;
//  4. unreachable: no attach path from the root to the target, over the
//     document plus the attach edges the commit adds (removed ones still
//     count), where an alias is no path;
//  5. slot-exists, slot-missing;
//  6. too-many-observables, too-many-slots, only when nothing above applies.
//
// Every finding of ranks 2 to 5 is reported, by rank and then in canonical
// delta order, so the reasons do not depend on the order of the deltas; a
// refusal carries at most MaxReasons. Paths are text steps: object keys as
// they are, array positions as lowercase hex, map keys as id text (Step).
//
// It does not decode or encode bytes (protocol/commit), judge whether a
// commit should be accepted, or keep history; and it is not safe for
// concurrent use: one owner drives a document.
package document
