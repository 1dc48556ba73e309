// Package provenance decides what a republished entry says about its
// origin: exactly one rs:ln rel="via" link to the origin, the upstream links
// that are passed on, rewritten or dropped (spec 14.8), and the chain of hops
// from the origin through each aggregator to this one.
package provenance
