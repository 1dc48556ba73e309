package resourcesync

import (
	"encoding/xml"
	"time"
)

// Namespaces of the documents this package reads and writes.
const (
	SitemapNS = "http://www.sitemaps.org/schemas/sitemap/0.9"
	RSNS      = "http://www.openarchives.org/rs/terms/"
)

// Root is the root element of a Sitemap document: a list of resources
// (urlset) or a list of other lists (sitemapindex).
type Root int

const (
	URLSet Root = iota
	SitemapIndex
)

func (r Root) String() string {
	if r == SitemapIndex {
		return "sitemapindex"
	}
	return "urlset"
}

// Capability values of rs:md capability, as the core and notification specs
// define them.
const (
	CapDescription          = "description"
	CapCapabilityList       = "capabilitylist"
	CapResourceList         = "resourcelist"
	CapChangeList           = "changelist"
	CapResourceDump         = "resourcedump"
	CapChangeDump           = "changedump"
	CapResourceDumpManifest = "resourcedump-manifest"
	CapChangeDumpManifest   = "changedump-manifest"
	CapChangeNotification   = "change-notification"
)

// Change values of rs:md change.
const (
	Created = "created"
	Updated = "updated"
	Deleted = "deleted"
)

// MD is an rs:md element: the metadata of a document (in its header) or of
// one entry. A zero time means the attribute is absent; so does a nil Length.
type MD struct {
	Capability string
	At         time.Time
	Completed  time.Time
	From       time.Time
	Until      time.Time
	Change     string
	DateTime   time.Time
	Encoding   string
	Hash       Hashes
	Length     *int64
	Path       string
	Type       string
	// Extra keeps attributes this package does not know, in document order,
	// so that a document written back says what it said.
	Extra []xml.Attr
}

// Link is an rs:ln element. A zero Modified, nil Length and zero Pri mean
// the attribute is absent.
type Link struct {
	Rel      string
	Href     string
	Modified time.Time
	Hash     Hashes
	Length   *int64
	Type     string
	Encoding string
	Path     string
	Pri      int
	Extra    []xml.Attr
}

// Element is an element from a namespace this package does not interpret
// (an extension), kept as raw XML so that it survives a round trip.
type Element struct {
	Name xml.Name
	// XML is the element itself, serialised, namespace declarations included.
	XML []byte
}

// Header is everything of a document that comes before its first entry:
// the root element, the document's own rs:md and its rs:ln links.
type Header struct {
	Root  Root
	MD    MD
	Links []Link
	// Extra keeps unknown child elements of the root that precede the
	// first entry, and unknown attributes of the root element.
	Extra     []Element
	RootAttrs []xml.Attr
}

// Entry is one url element of a urlset, or one sitemap element of a
// sitemapindex.
type Entry struct {
	Loc        string
	LastMod    time.Time
	ChangeFreq string
	MD         *MD
	Links      []Link
	Extra      []Element
	// Line is the line of the entry's opening tag in the document read, for
	// error messages; zero for entries that were not read from a document.
	Line int
}

// Kind names what a document is, from its root and capability.
type Kind string

const (
	KindUnknown              Kind = "unknown"
	KindSourceDescription    Kind = "Source Description"
	KindCapabilityList       Kind = "Capability List"
	KindResourceList         Kind = "Resource List"
	KindResourceListIndex    Kind = "Resource List Index"
	KindChangeList           Kind = "Change List"
	KindChangeListIndex      Kind = "Change List Index"
	KindResourceDump         Kind = "Resource Dump"
	KindResourceDumpIndex    Kind = "Resource Dump Index"
	KindResourceDumpManifest Kind = "Resource Dump Manifest"
	KindChangeDump           Kind = "Change Dump"
	KindChangeDumpIndex      Kind = "Change Dump Index"
	KindChangeDumpManifest   Kind = "Change Dump Manifest"
	KindChangeNotification   Kind = "Change Notification"
	// Sitemap documents without rs:md capability are plain Sitemaps, which
	// Sources may still offer as Resource Lists.
	KindSitemap Kind = "Sitemap"
)

// Kind reports which document type the header starts.
func (h *Header) Kind() Kind {
	idx := h.Root == SitemapIndex
	pick := func(list, index Kind) Kind {
		if idx {
			return index
		}
		return list
	}
	switch h.MD.Capability {
	case CapDescription:
		return KindSourceDescription
	case CapCapabilityList:
		return KindCapabilityList
	case CapResourceList:
		return pick(KindResourceList, KindResourceListIndex)
	case CapChangeList:
		return pick(KindChangeList, KindChangeListIndex)
	case CapResourceDump:
		return pick(KindResourceDump, KindResourceDumpIndex)
	case CapChangeDump:
		return pick(KindChangeDump, KindChangeDumpIndex)
	case CapResourceDumpManifest:
		return KindResourceDumpManifest
	case CapChangeDumpManifest:
		return KindChangeDumpManifest
	case CapChangeNotification:
		return KindChangeNotification
	case "":
		return KindSitemap
	}
	return KindUnknown
}

// Link returns the first link with rel, or nil.
func (h *Header) Link(rel string) *Link { return findLink(h.Links, rel) }

// Link returns the first link with rel, or nil.
func (e *Entry) Link(rel string) *Link { return findLink(e.Links, rel) }

func findLink(links []Link, rel string) *Link {
	for i := range links {
		if links[i].Rel == rel {
			return &links[i]
		}
	}
	return nil
}

// ChangeTime is when the change an entry records happened: rs:md datetime in
// the 1.1 form, lastmod in the 1.0 form.
func (e *Entry) ChangeTime() time.Time {
	if e.MD != nil && !e.MD.DateTime.IsZero() {
		return e.MD.DateTime
	}
	return e.LastMod
}
