package sim

import (
	"fmt"
	"html"
	"net/http"
)

// serveHome serves an HTML page whose link rel="resourcesync" points at the
// Capability List, as the spec's discovery by HTML link expects.
func (s *Source) serveHome(w http.ResponseWriter, r *http.Request, base string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="resourcesync"`, base+PathCapabilities))
	if r.Method == http.MethodHead {
		return
	}
	href := html.EscapeString(base + PathCapabilities)
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html>\n<head>\n<title>Simulated ResourceSync Source</title>\n"+
		"<link rel=\"resourcesync\" href=\"%s\">\n</head>\n<body>\n<p>A simulated ResourceSync Source: "+
		"<a href=\"%s\">Capability List</a>.</p>\n</body>\n</html>\n", href, href)
}

// serveRobots serves a robots.txt whose Sitemap line names the Resource
// List, as the spec's discovery by robots.txt expects.
func (s *Source) serveRobots(w http.ResponseWriter, r *http.Request, base string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if r.Method == http.MethodHead {
		return
	}
	fmt.Fprintf(w, "User-agent: *\nDisallow: /private/\nSitemap: %s\n", base+PathResourceList)
}
