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
	u, err := url.Parse(origin)
	if err != nil {
		return "", fmt.Errorf("aggregator URI of %s: %w", origin, err)
	}
	if u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("aggregator URI of %s: want an absolute hierarchical URI", origin)
	}
	var b strings.Builder
	b.Grow(len(collection) + len(origin) + 8)
	b.WriteByte('/')
	b.WriteString(collection)
	b.WriteString("/r/")
	b.WriteString(url.PathEscape(strings.ToLower(u.Scheme)))
	b.WriteByte('/')
	b.WriteString(url.PathEscape(u.Host))
	b.WriteString(u.EscapedPath())
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteByte('?')
		b.WriteString(u.RawQuery)
	}
	return b.String(), nil
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
