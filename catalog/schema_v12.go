package catalog

import (
	"encoding/hex"
	"fmt"
	"strings"
)

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
// whole bytes: what digestValue stores as bytes.
func hexOfBytes(col string) string {
	return fmt.Sprintf(`(typeof(%[1]s) = 'text' AND %[1]s <> '' AND length(%[1]s) %% 2 = 0 AND %[1]s NOT GLOB '*[^0-9a-f]*')`, col)
}

// digestValue is how a row stores a digest: lowercase hex of whole bytes
// as the bytes, anything else ("" for none) as the text it is.
func digestValue(s string) any {
	if s == "" || len(s)%2 != 0 {
		return s
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return s
		}
	}
	b, _ := hex.DecodeString(s)
	return b
}

// hexDigest scans a digest column into the string it points to, as hex:
// a digest kept as bytes is rendered in lowercase hex, one kept as text
// is read as it is.
type hexDigest struct{ s *string }

func (d hexDigest) Scan(v any) error {
	switch v := v.(type) {
	case []byte:
		// One allocation, the string's (hex.EncodeToString makes two).
		const digits = "0123456789abcdef"
		var b strings.Builder
		b.Grow(2 * len(v))
		for _, c := range v {
			b.WriteByte(digits[c>>4])
			b.WriteByte(digits[c&0x0f])
		}
		*d.s = b.String()
	case string:
		*d.s = v
	case nil:
		*d.s = ""
	default:
		return fmt.Errorf("a digest column holds a %T", v)
	}
	return nil
}

// digestSQL is a digest column as SQL reads it out: hex, whichever form
// the row keeps it in.
func digestSQL(col string) string {
	return `iif(typeof(` + col + `) = 'blob', lower(hex(` + col + `)), ` + col + `)`
}

// md5Prefix is the key of changes_md5 for an md5 (hex): the first 6 bytes
// of the value a row stores for it (digestValue).
func md5Prefix(md5 string) any {
	switch v := digestValue(md5).(type) {
	case []byte:
		return v[:min(len(v), 6)]
	case string:
		return v[:min(len(v), 6)]
	}
	return nil
}

// byMD5From is the FROM and WHERE of the lookups by md5 (see schemaV11
// and schemaV12): the change-log rows whose md5 has the prefix ?1 and is
// ?2 (md5Prefix and digestValue of the hex), and the resource each is the
// current change of, held. The resources are named r; a lookup adds its
// own conditions from ?3 on. A join of the two tables cost about 15 µs
// more a lookup than this form, in which SQLite reads the few change-log
// rows first and then seeks each resource by its key.
const byMD5From = ` FROM resources AS r
	WHERE (r.collection, r.uri, r.seq) IN (SELECT collection, uri, seq FROM changes
		WHERE substr(md5, 1, 6) = ?1 AND op <> 'deleted' AND md5 = ?2)
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
