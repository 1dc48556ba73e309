package catalog

// schemaV6 drops the sha-256 index of resources.
//
// Its keys are random: once the index outgrows what one batch of the
// applier touches, every insert dirties a page of it of its own, written
// to the WAL at commit and again at checkpoint, so the cost of applying an
// event grew with the catalog (BenchmarkApplyIngest at 300,000 events:
// 17.1 KiB written and 99 CPU-µs per event with it, 9.4 KiB and 66 µs
// without). The one read it served, HeldByHash for a Source declaring a
// sha-256, is answered by the blob store, whose keys are sha-256 digests:
// the copy the index would find is that very blob (fetch's skip rules).
// HeldByHash now finds a copy by its md5, whose index stays, and checks a
// declared sha-256 beside it.
const schemaV6 = `
DROP INDEX IF EXISTS resources_sha256;
`
