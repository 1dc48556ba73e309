package catalog

// schemaV8 drops the two indexes of resources that repeated its primary
// key (collection, uri) under another first column.
//
// resources_source (source, collection, uri) served the harvester's walk of
// what a Source holds, which only ever wanted the rows of the Source's own
// collection: the walk now reads that collection by primary key and keeps
// the Source's rows (walkSource). resources_uri (uri) served the lookups by
// URI across collections, which now search the primary key once for each
// collection the catalog has (collection IN the collections table: one per
// Source unless Sources share one), a few microseconds each, on the lookups
// the republisher serves by URI. Each index was written at hundreds of
// places by every batch of the applier: into 100,000 resources in batches
// of 2,500, one event cost 72-79 CPU-µs and 16.0 KiB written with both,
// 58-63 µs and 13.1 KiB without (BenchmarkApplyIngest, alternated). A
// 100,000-resource baseline from bench/staticsrc wrote 1.47 GB in all
// instead of 1.69-1.74 GB.
const schemaV8 = `
DROP INDEX IF EXISTS resources_source;
DROP INDEX IF EXISTS resources_uri;
`
