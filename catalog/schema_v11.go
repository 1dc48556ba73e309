package catalog

import "strings"

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

// md5Prefix is the key of changes_md5 for an md5 (hex).
func md5Prefix(md5 string) string { return md5[:min(len(md5), 12)] }

// byMD5From is the FROM and WHERE of the lookups by md5 (see schemaV11):
// the change-log rows whose md5 has the prefix ?1 and is ?2, and the
// resource each is the current change of, held. The resources are named
// r; a lookup adds its own conditions from ?3 on. A join of the two
// tables cost about 15 µs more a lookup than this form, in which SQLite
// reads the few change-log rows first and then seeks each resource by
// its key.
const byMD5From = ` FROM resources AS r
	WHERE (r.collection, r.uri, r.seq) IN (SELECT collection, uri, seq FROM changes
		WHERE substr(md5, 1, 12) = ?1 AND op <> 'deleted' AND md5 = ?2)
	AND r.deleted = 0 AND r.md5 = ?2`

// qualified is cols, a list of the resources table's columns, each
// named with the alias r.
func qualified(cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = "r." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
