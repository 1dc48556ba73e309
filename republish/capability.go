package republish

import (
	"io"
	"net/http"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// xmlType is the media type of every ResourceSync document served.
const xmlType = "application/xml; charset=utf-8"

// The Source Description and the Capability Lists depend on the
// configuration only, so their entity tags are derived from it and they
// carry no lastmod (spec 8 and 9 advise leaving it out).

func (s *Server) serveSourceDescription(w http.ResponseWriter, r *http.Request) {
	h := &resourcesync.Header{MD: resourcesync.MD{Capability: resourcesync.CapDescription}}
	if s.cfg.DescribedBy != "" {
		h.Links = append(h.Links, resourcesync.Link{Rel: "describedby", Href: s.cfg.DescribedBy})
	}
	s.send(w, r, reply{doc: "description", contentType: xmlType, etag: etagOf("description", s.confID()),
		write: func(out io.Writer) (int, error) {
			wr, err := resourcesync.NewWriter(out, h)
			if err != nil {
				return 0, err
			}
			for _, c := range s.collections() {
				e := resourcesync.Entry{Loc: s.capabilityListURL(c.Name), MD: &resourcesync.MD{Capability: resourcesync.CapCapabilityList}}
				if c.DescribedBy != "" {
					e.Links = []resourcesync.Link{{Rel: "describedby", Href: c.DescribedBy}}
				}
				if err := wr.Write(&e); err != nil {
					return 0, err
				}
			}
			return len(s.collections()), wr.Close()
		}})
}

// capabilities returns the capability documents of a collection, in the
// order the Capability List gives them. Resource Dumps, Change Dumps and
// the change-notification channel will be added here when they are served.
func (s *Server) capabilities(c *Collection) []resourcesync.Entry {
	return append([]resourcesync.Entry{
		{Loc: s.resourceListURL(c.Name), MD: &resourcesync.MD{Capability: resourcesync.CapResourceList}},
		{Loc: s.capabilityChangeListURL(c.Name), MD: &resourcesync.MD{Capability: resourcesync.CapChangeList}},
	}, s.dumpCapabilities(c)...)
}

func (s *Server) serveCapabilityList(w http.ResponseWriter, r *http.Request, c *Collection) {
	h := &resourcesync.Header{MD: resourcesync.MD{Capability: resourcesync.CapCapabilityList}}
	if c.DescribedBy != "" {
		h.Links = append(h.Links, resourcesync.Link{Rel: "describedby", Href: c.DescribedBy})
	}
	h.Links = append(h.Links, resourcesync.Link{Rel: "up", Href: s.sourceDescriptionURL()})
	caps := s.capabilities(c)
	if s.notifyOn() {
		caps = append(caps, s.notificationCapability(c))
	}
	s.send(w, r, reply{doc: "capabilitylist", contentType: xmlType, etag: etagOf("capabilitylist", c.Name, s.confID()),
		write: func(out io.Writer) (int, error) {
			wr, err := resourcesync.NewWriter(out, h)
			if err != nil {
				return 0, err
			}
			for i := range caps {
				if err := wr.Write(&caps[i]); err != nil {
					return 0, err
				}
			}
			return len(caps), wr.Close()
		}})
}
