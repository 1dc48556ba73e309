// Package republish serves the aggregator's own ResourceSync documents
// from the catalog: Source Description, one Capability List per collection,
// Resource Lists, Change Lists and their Indexes, Dumps, the bitstreams
// themselves, and the change-notification topic of each collection,
// advertised in its Capability List (package notify publishes on it and
// runs the hub).
//
// Times in what it serves are the aggregator's own (spec 14.8): at,
// completed, from, until and change times come from the catalog and the
// EVENTS log, never from the origin, whose times travel only in via links.
package republish
