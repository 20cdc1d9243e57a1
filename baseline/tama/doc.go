// Package tama is TAMA (Zhao and Wu, "Towards approximate event
// processing in a large-scale content-based network", ICDCS 2011), made
// exact, registered as the index "tama".
//
// # What the paper specifies
//
// For each attribute, TAMA keeps a table of cells over the value domain
// in levels: level 0 is one cell for the whole domain, and each level
// halves every cell of the one above, down to a fixed number of levels.
// A subscription's interval predicate on the attribute is stored in the
// few largest cells it covers entirely (the canonical decomposition of
// the interval into aligned cells), and, at the last level, in the cells
// it only partly covers. Matching is counting: for an event value, each
// level has exactly one cell containing it; every subscription listed in
// those cells gets one more satisfied predicate, and a subscription
// matches when its count equals its number of predicates. Because the
// partly covered cells at the last level count a predicate the value may
// not satisfy, TAMA is approximate: it can return false positives, fewer
// with more levels.
//
// # What it leaves open, and the choices made here
//
//   - Exactness: Sift's indexes must return exactly Scan's answer, so the
//     partly covered cells at the last level keep, instead of a plain
//     entry, a reference to the interval, which is checked against the
//     event value before counting. Fully covered cells count without a
//     check, as in the paper. The cost is one comparison per partial
//     entry in the one last-level cell an event value falls in.
//   - Operators and types: TAMA is defined for numeric intervals. As in
//     package rein, ==, <, <=, >, >= on int or float values are folded per
//     attribute into one interval (open or closed ends, possibly
//     unbounded); any other constraint is refused with
//     baseline.ErrUnsupported. An event value of another type satisfies no
//     predicate of its attribute.
//   - The domain and the edges: Config.Lo and Config.Hi give the domain
//     (default [0, 10^6)); the first and last cells of every level extend
//     to minus and plus infinity, so an interval covers an edge cell only
//     if it is unbounded on that side, and values outside the domain are
//     still counted exactly.
//   - Levels: Config.Levels (default 13, so 4096 cells at the last level)
//     sets the depth; the paper studies it as the accuracy knob.
//   - Updates: inserting decomposes the interval into its cells; deleting
//     recomputes the same decomposition and removes the subscription from
//     those cells.
//   - Cells are addressed as a complete binary tree in an array, so the
//     cells containing a value are the ancestors of its last-level cell.
package tama
