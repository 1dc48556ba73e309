package catalog

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// How the rows keep a copy's digests (schemaV12): what the writes store
// and how every read renders them back as hex, and the lookups by md5.

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

// md5Args are the arguments ?1 and ?2 of byMD5From for an md5 (hex): the
// key of changes_md5, the first 6 bytes of the value a row stores for
// it, and that value (digestValue).
func md5Args(md5 string) (prefix, value any) {
	switch v := digestValue(md5).(type) {
	case []byte:
		return v[:min(len(v), 6)], v
	case string:
		return v[:min(len(v), 6)], v
	}
	panic("unreachable: digestValue returns bytes or a string")
}

// byMD5From is the FROM and WHERE of the lookups by md5 (see schemaV11
// and schemaV12): the change-log rows whose md5 has the prefix ?1 and is
// ?2 (md5Args), and the resource each is the
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
