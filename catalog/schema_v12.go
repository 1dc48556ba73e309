package catalog

import "fmt"

// schemaV12 keeps the copy's digests as bytes rather than hex.
//
// Each resource row and each change-log row held its copy's sha-256 and
// md5 as 64 and 32 hex digits: 96 bytes a row, about 100 of the 783 a
// resource takes with its change log in bench/staticsrc's shape
// (BenchmarkCatalogSize) and of the 1,369 in a repository's. From this
// step a digest that is lowercase hex of whole bytes, as every digest the
// fetch workers compute is, is stored as its bytes (digestValue), half
// the size; anything else a row may hold (no digest, "", or a digest in
// another form) stays the text it is, so nothing is lost or changed. The
// columns keep their declared type: SQLite keeps each value's own type
// whatever the column says. Every read renders a digest as hex again
// (hexDigest, digestSQL), whichever form its row has.
//
// changes_md5 indexes the first 6 bytes of the md5 (48 bits, as the 12
// hex digits of schema 11 did), rebuilt after the rows are rewritten so
// that the rewrite does not move index entries one by one.
var schemaV12 = `
DROP INDEX IF EXISTS changes_md5;
UPDATE resources SET
	sha256 = iif(` + hexOfBytes("sha256") + `, unhex(sha256), sha256),
	md5 = iif(` + hexOfBytes("md5") + `, unhex(md5), md5);
UPDATE changes SET
	sha256 = iif(` + hexOfBytes("sha256") + `, unhex(sha256), sha256),
	md5 = iif(` + hexOfBytes("md5") + `, unhex(md5), md5);
CREATE INDEX changes_md5 ON changes (substr(md5, 1, 6)) WHERE op <> 'deleted';
`

// hexOfBytes is the SQL condition that col is text of lowercase hex of
// whole bytes: what digestValue stores as bytes. It is part of the
// released step and is not edited, as the step is not.
func hexOfBytes(col string) string {
	return fmt.Sprintf(`(typeof(%[1]s) = 'text' AND %[1]s <> '' AND length(%[1]s) %% 2 = 0 AND %[1]s NOT GLOB '*[^0-9a-f]*')`, col)
}
