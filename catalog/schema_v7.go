package catalog

// schemaV7 narrows the origin index of resources to the rows whose origin
// is not their URI.
//
// A resource harvested from its origin has origin = uri, and every lookup
// by origin asks by URI too (byOriginSQL, byURISQL, provenanceSQL), so the
// index needs only the resources reached through another aggregator. For
// the others it repeated resources_uri, and a Source whose URIs are not
// listed in the catalog's byte order makes each batch of the applier
// touch its pages at hundreds of places: into 100,000 resources in
// batches of 2,500, 19.5 KiB written and 131 CPU-µs an event with the
// whole index, 16.0 KiB and 121 µs without it (BenchmarkApplyIngest).
const schemaV7 = `
DROP INDEX resources_origin;
CREATE INDEX resources_origin ON resources (origin) WHERE origin <> uri;
`
