// Package sim is a simulated ResourceSync Source served over HTTP: the
// upstream that viaduct's tests, demo and benchmarks harvest from.
//
// It behaves like a conformant Source (Source Description, Capability List,
// Resource List and its Index, Change Lists per period with their Index,
// bitstreams with validators, conditional GET, gzip, discovery through
// robots.txt and an HTML link) and is deterministic: a resource's bytes
// follow from (seed, id, version), so they are generated when served and
// never stored, and only a few dozen bytes per resource are kept.
//
// It can misbehave on purpose (see Fault), so that the harvester's handling
// of bad input is tested against a real HTTP server. It must never be used as
// a store of real data, and it keeps no state outside its Source value.
package sim
