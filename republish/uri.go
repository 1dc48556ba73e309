package republish

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// The aggregator URI of a resource is derived from its origin URI so that
// it is stable (the same origin resource always has the same URI here,
// whichever upstream it came through) and readable:
//
//	origin     https://Example.org:8443/a/b%20c.pdf?x=1&y=2#frag
//	aggregator <base>/<collection>/r/https/example.org:8443/a/b%20c.pdf?x=1&y=2
//
// The scheme (lowercased) and the host (as written, port kept,
// path-escaped) are path
// segments; the origin's path follows in its escaped form exactly as the
// origin wrote it; the query string is kept verbatim; the fragment, which
// never reaches a server, is dropped. An origin without a path ("http://h")
// maps to ".../r/http/h" and one with "/" to ".../r/http/h/", so the mapping
// can be reversed exactly.

// errNotResource marks a path that is not a resource path.
var errNotResource = errors.New("not a resource path")

// resourcePath returns the path and query, below the base URL, of the
// aggregator's copy of origin in collection.
func resourcePath(collection, origin string) (string, error) {
	b, err := appendResourcePath(nil, collection, origin)
	return string(b), err
}

// appendResourcePath is resourcePath appending to dst. Origins made of
// plain characters (the common case) are mapped without parsing; others
// go through net/url.
func appendResourcePath(dst []byte, collection, origin string) ([]byte, error) {
	if scheme, host, rest, ok := splitPlain(origin); ok {
		dst = append(dst, '/')
		dst = append(dst, collection...)
		dst = append(dst, "/r/"...)
		dst = appendLower(dst, scheme)
		dst = append(dst, '/')
		dst = append(dst, host...)
		return append(dst, rest...), nil
	}
	u, err := url.Parse(origin)
	if err != nil {
		return dst, fmt.Errorf("aggregator URI of %s: %w", origin, err)
	}
	if u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return dst, fmt.Errorf("aggregator URI of %s: want an absolute hierarchical URI", origin)
	}
	dst = append(dst, '/')
	dst = append(dst, collection...)
	dst = append(dst, "/r/"...)
	dst = append(dst, url.PathEscape(strings.ToLower(u.Scheme))...)
	dst = append(dst, '/')
	dst = append(dst, url.PathEscape(u.Host)...)
	dst = append(dst, u.EscapedPath()...)
	if u.RawQuery != "" || u.ForceQuery {
		dst = append(dst, '?')
		dst = append(dst, u.RawQuery...)
	}
	return dst, nil
}

// parseResourcePath reverses resourcePath: from a request's escaped path
// and raw query it returns the collection and the origin URI.
func parseResourcePath(escapedPath, rawQuery string, forceQuery bool) (collection, origin string, err error) {
	rest, ok := strings.CutPrefix(escapedPath, "/")
	if !ok {
		return "", "", errNotResource
	}
	collection, rest, ok = strings.Cut(rest, "/r/")
	if !ok || collection == "" || strings.Contains(collection, "/") {
		return "", "", errNotResource
	}
	scheme, rest, _ := strings.Cut(rest, "/")
	host, path, hasPath := strings.Cut(rest, "/")
	if scheme, err = url.PathUnescape(scheme); err != nil || scheme == "" {
		return "", "", errNotResource
	}
	if host, err = url.PathUnescape(host); err != nil || host == "" {
		return "", "", errNotResource
	}
	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	if hasPath {
		b.WriteByte('/')
		b.WriteString(path)
	}
	if rawQuery != "" || forceQuery {
		b.WriteByte('?')
		b.WriteString(rawQuery)
	}
	return collection, b.String(), nil
}

// splitPlain splits scheme://host/rest when every byte is one that needs
// no escaping in a path or query and every '%' starts a valid escape, so
// that the mapping is the text itself. rest drops any fragment.
func splitPlain(origin string) (scheme, host, rest string, ok bool) {
	i := strings.Index(origin, "://")
	if i <= 0 {
		return "", "", "", false
	}
	scheme, after := origin[:i], origin[i+3:]
	for j := 0; j < len(scheme); j++ {
		c := scheme[j]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || j > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "", "", "", false
		}
	}
	end := strings.IndexAny(after, "/?#")
	if end < 0 {
		end = len(after)
	}
	host, rest = after[:end], after[end:]
	if host == "" {
		return "", "", "", false
	}
	for j := 0; j < len(host); j++ {
		c := host[j]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == ':') {
			return "", "", "", false
		}
	}
	if k := strings.IndexByte(rest, '#'); k >= 0 {
		rest = rest[:k]
	}
	if rest != "" && rest[0] == '?' {
		// An empty path before a query: leave it to net/url.
		return "", "", "", false
	}
	for j := 0; j < len(rest); j++ {
		c := rest[j]
		switch {
		case plainPath[c]:
		case c == '%' && j+2 < len(rest) && ishex(rest[j+1]) && ishex(rest[j+2]):
		default:
			return "", "", "", false
		}
	}
	return scheme, host, rest, true
}

// plainPath marks the bytes a path or query carries as they are: letters,
// digits and "-._~!$&'()*+,;=:@/?". A table, since every entry of every
// list runs every byte of its origin URI through it.
var plainPath = func() (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("-._~!$&'()*+,;=:@/?", byte(c)) >= 0
	}
	return t
}()

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}
