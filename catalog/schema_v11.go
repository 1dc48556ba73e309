package catalog

// schemaV11 moves the index by md5 from the resources to the change log.
//
// The fetch workers' lookup by hash (HeldByHash) and the fixity audit's
// search for the copies of a blob (CopiesOf) went by resources_md5
// (source, md5), whose entries held the table's whole key after the
// digest: 92 bytes a resource in bench/staticsrc's shape, 146 in a
// repository's. Its keys are digests, random by nature, so once it
// outgrew the writer's page cache every event of a batch dirtied a page
// of it of its own: applying a baseline into 1,000,000 resources cost
// 51.8 CPU-µs and wrote 19.6 KiB an event, against 35.0 µs and 7.8 KiB
// with it dropped (BenchmarkApplyIngest), most of why a large baseline
// slowed as it went.
//
// changes_md5 indexes the first 12 hex digits of each logged copy's md5
// (48 bits; the full digest is compared after), beside the row's integer
// key: a quarter to a sixth of the old entry. A change-log row at the
// resource's own seq names its current copy, and retention always keeps
// that change (Prune), so the lookups find candidates there and take
// each resource whose current change one of them is. The resources'
// md5 column is what a lookup then checks the copy against, and their
// source column what HeldByHash keeps its Source's rows by. Deletions, whose rows name the copy that
// went, are left out of the index.
const schemaV11 = `
DROP INDEX IF EXISTS resources_md5;
CREATE INDEX changes_md5 ON changes (substr(md5, 1, 12)) WHERE op <> 'deleted';
`
