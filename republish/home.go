package republish

import (
	"html/template"
	"io"
	"net/http"
	"strings"
)

// homePage lists the collections, each with a discovery link to its
// Capability List (spec 6.3.3).
var homePage = template.Must(template.New("home").Parse(`<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>viaduct ResourceSync mirror</title>
{{range .}}<link rel="resourcesync" href="{{.CapabilityList}}">
{{end}}</head>
<body>
<h1>ResourceSync mirror</h1>
<p>Source Description: <a href="{{with index . 0}}{{.SourceDescription}}{{end}}">/.well-known/resourcesync</a></p>
<ul>
{{range .}}<li>{{.Name}}: <a href="{{.CapabilityList}}">Capability List</a>, <a href="{{.ResourceList}}">Resource List</a>, <a href="{{.ChangeList}}">Change Lists</a></li>
{{end}}</ul>
</body>
</html>
`))

type homeCollection struct {
	Name, SourceDescription, CapabilityList, ResourceList, ChangeList string
}

func (s *Server) serveHome(w http.ResponseWriter, r *http.Request) {
	var cs []homeCollection
	for _, c := range s.collections() {
		cs = append(cs, homeCollection{Name: c.Name, SourceDescription: s.sourceDescriptionURL(),
			CapabilityList: s.capabilityListURL(c.Name), ResourceList: s.resourceListURL(c.Name), ChangeList: s.changeListIndexURL(c.Name)})
	}
	s.send(w, r, reply{doc: "html", contentType: "text/html; charset=utf-8", etag: etagOf("home", s.confID()),
		write: func(out io.Writer) (int, error) { return len(cs), homePage.Execute(out, cs) }})
}

// serveRobots allows everything and names each collection's Resource List
// with a Sitemap line (spec 6.3.4).
func (s *Server) serveRobots(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow:\n")
	for _, c := range s.collections() {
		b.WriteString("Sitemap: " + s.resourceListURL(c.Name) + "\n")
	}
	body := b.String()
	s.send(w, r, reply{doc: "robots", contentType: "text/plain; charset=utf-8", etag: etagOf("robots", s.confID()),
		write: func(out io.Writer) (int, error) {
			_, err := io.WriteString(out, body)
			return len(s.collections()), err
		}})
}
