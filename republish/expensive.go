package republish

import (
	"net/http"
	"strings"
)

// Expensive reports whether r asks for a Resource or Change List or
// Index (a catalog scan) or a dump package: the requests the public
// listener bounds with max_expensive. It lives here, beside the URL
// layout it reads.
func Expensive(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	_, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	return rest == "resourcelist.xml" || rest == "changelist.xml" ||
		strings.HasPrefix(rest, "resourcelist/") || strings.HasPrefix(rest, "changelist/") || strings.HasPrefix(rest, "dumps/")
}
