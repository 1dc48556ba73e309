package dump

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
)

// maxDerivedPath keeps derived paths well inside what ZIP tools and file
// systems take.
const maxDerivedPath = 200

// DerivePath is the package path a Writer gives the bitstream of uri when
// the entry has none: dir, then the URI's host and path, each segment
// reduced to letters, digits and "._~-" with everything else
// percent-escaped, the query kept as an escaped suffix. It depends only on
// uri, so a resource keeps its path from one package to the next; a URI
// that would give a path too long, or none, gets one named by its sha-256.
func DerivePath(dir, uri string) string {
	dir = "/" + strings.Trim(dir, "/")
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return hashedPath(dir, uri)
	}
	var b strings.Builder
	b.WriteString(dir)
	b.WriteByte('/')
	escapeSegment(&b, strings.ToLower(u.Host))
	segs := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
	for i, s := range segs {
		if us, err := url.PathUnescape(s); err == nil {
			s = us
		}
		if s == "" && i < len(segs)-1 {
			continue // "a//b" is written as "a/b"; uniqueness is the Writer's
		}
		if s == "" {
			s = "index"
		}
		b.WriteByte('/')
		escapeSegment(&b, s)
	}
	if u.RawQuery != "" {
		escapeSegment(&b, "?"+u.RawQuery)
	}
	p := b.String()
	if len(p) > maxDerivedPath {
		return hashedPath(dir, uri)
	}
	return p
}

func hashedPath(dir, uri string) string {
	sum := sha256.Sum256([]byte(uri))
	return dir + "/_/" + hex.EncodeToString(sum[:])
}

// escapeSegment writes s with every byte outside [A-Za-z0-9._~-]
// percent-escaped, and "." and ".." escaped whole, so that no segment is
// special to a file system.
func escapeSegment(b *strings.Builder, s string) {
	if s == "." || s == ".." {
		b.WriteString(strings.Repeat("%2E", len(s)))
		return
	}
	const hexd = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isLetter(c) || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '~' || c == '-' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexd[c>>4])
		b.WriteByte(hexd[c&15])
	}
}

// uniquePath returns p, or p with "~2", "~3"... appended when p is taken:
// a Change Dump package holds one bitstream per change, and a resource may
// change twice in one package.
func uniquePath(p string, taken map[string]struct{}) string {
	if _, ok := taken[p]; !ok {
		return p
	}
	for i := 2; ; i++ {
		q := p + "~" + strconv.Itoa(i)
		if _, ok := taken[q]; !ok {
			return q
		}
	}
}
