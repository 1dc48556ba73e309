package resourcesync

import (
	"net/url"
	"strings"
)

// hashes reads a hash attribute, warning about the digests it had to
// read in base64 or could not read at all.
func (r *Reader) hashes(room Hashes, v []byte) (Hashes, error) {
	var note hashNote
	hs, err := parseHashesInto(room, string(v), &note)
	if note&noteBase64 != 0 {
		r.warn(WarnHashBase64, r.where(), "hash %q has a base64 digest: read as the digest it is", v)
	}
	if note&noteUnreadable != 0 {
		r.warn(WarnHashUnreadable, r.where(), "hash %q: a digest that is neither hex nor base64 of its algorithm's length cannot be verified and is ignored", v)
	}
	return hs, err
}

// capability reads a capability value as the spec spells it, when a
// producer spelled it otherwise.
func (r *Reader) capability(md *MD, line int) {
	c := md.Capability
	if c == "" {
		return
	}
	low := strings.ToLower(c)
	switch {
	case low == "resourcesync":
		md.Capability = CapDescription
		r.warn(WarnDraft, line, "capability %q is the 0.9 draft's name of the Source Description: read as %q", c, CapDescription)
		return
	case low == "changelistindex":
		r.warn(WarnCapabilityVariant, line, "capability %q is no spec's value: read as a Change List Index (a Change List in a sitemapindex)", c)
	case low != c && (knownCapability(low) || archiveCapability(low)):
		r.warn(WarnCapabilityCase, line, "capability %q is not in lowercase: read as %q", c, low)
	default:
		return
	}
	md.Capability = low
}

// tolerateHeader reads the header's departures from the spec once it is
// complete: capability spellings, the draft's up link, relative links,
// and the times a document of its kind should have.
func (r *Reader) tolerateHeader() {
	r.namespaces(0)
	h := &r.header
	r.capability(&h.MD, 0)
	if c := h.MD.Capability; h.Root == SitemapIndex && (c == "changelist-archive" || c == "changelistindex") {
		// DSpace (through ResourceSyncJava) names its Change List Index
		// by the 0.9 draft's changelist-archive.
		h.MD.Capability = CapChangeList
		r.warn(WarnCapabilityVariant, 0, "a sitemapindex with capability %q: read as a Change List Index", c)
	}
	r.kind = h.Kind()
	if r.kind == KindCapabilityList && h.Link("up") == nil {
		if l := h.Link("resourcesync"); l != nil {
			l.Rel = "up"
			r.warn(WarnDraft, 0, "rel=\"resourcesync\" is the 0.9 draft's link to the Source Description: read as rel=\"up\"")
		}
	}
	for i := range h.Links {
		h.Links[i].Href = r.absolute(0, "rs:ln href", h.Links[i].Href)
	}
	switch {
	case snapshotKind(r.kind) && h.MD.At.IsZero():
		r.warn(WarnNoAt, 0, "%s has no at attribute: a Destination cannot tell when the snapshot was taken", r.kind)
	case changeKind(r.kind) && r.kind != KindChangeNotification && h.MD.From.IsZero():
		r.warn(WarnNoFrom, 0, "%s has no from attribute: a Destination cannot tell which changes it covers; its changes are placed by their own times", r.kind)
	}
}

// tolerateEntry reads an entry's departures from the spec: capability
// spellings, relative URIs, and change times outside the document's
// interval or out of order.
func (r *Reader) tolerateEntry(e *Entry) {
	r.namespaces(e.Line)
	e.Loc = r.absolute(e.Line, "loc", e.Loc)
	for i := range e.Links {
		e.Links[i].Href = r.absolute(e.Line, "rs:ln href", e.Links[i].Href)
	}
	if e.MD != nil {
		r.capability(e.MD, e.Line)
		if c := e.MD.Capability; r.kind == KindCapabilityList && knownCapability(c) {
			if r.caps&capBit(c) != 0 {
				r.warn(WarnDuplicateCapability, e.Line, "a second entry for capability %q: every entry of a capability is read", c)
			}
			r.caps |= capBit(c)
		}
	}
	if !changeEntries(r.kind) {
		return
	}
	t := e.ChangeTime()
	if t.IsZero() {
		return
	}
	md := &r.header.MD
	switch {
	case !md.From.IsZero() && t.Before(md.From):
		r.warn(WarnOutsideInterval, e.Line, "change time %s of %s is before the document's from %s: read all the same", showTime(t), e.Loc, showTime(md.From))
	case !md.Until.IsZero() && t.After(md.Until):
		r.warn(WarnOutsideInterval, e.Line, "change time %s of %s is after the document's until %s: read all the same", showTime(t), e.Loc, showTime(md.Until))
	}
	if !r.prevChange.IsZero() && t.Before(r.prevChange) {
		r.warn(WarnUnordered, e.Line, "change time %s of %s is before the one above it (%s): the changes are not in forward chronological order", showTime(t), e.Loc, showTime(r.prevChange))
	}
	r.prevChange = t
}

// namespaces warns about a misspelt Sitemap or ResourceSync namespace
// declared since the last call, which was read as the spec's.
func (r *Reader) namespaces(line int) {
	if r.ns.variant == "" {
		return
	}
	r.warn(WarnNamespace, line, "namespace %q read as the specification's", r.ns.variant)
	r.ns.variant = ""
}

// capBit is a capability's bit in Reader.caps.
func capBit(c string) uint16 {
	for i, k := range [...]string{CapDescription, CapCapabilityList, CapResourceList, CapChangeList,
		CapResourceDump, CapChangeDump, CapResourceDumpManifest, CapChangeDumpManifest, CapChangeNotification} {
		if k == c {
			return 1 << i
		}
	}
	return 0
}

// absolute resolves a relative URI against the document's URL, when the
// reader was given it; a relative URI is left as written otherwise. Both
// are warned about; an absolute URI costs one scan of its scheme.
func (r *Reader) absolute(line int, what, s string) string {
	if s == "" || hasScheme(s) {
		return s
	}
	ref, err := url.Parse(s)
	if err != nil {
		return s // not a URI at all: the validator says so
	}
	if r.base == nil {
		r.warn(WarnRelativeURI, line, "%s %q is relative: it is resolved against the document's URL", what, s)
		return s
	}
	abs := r.base.ResolveReference(ref).String()
	r.warn(WarnRelativeURI, line, "%s %q is relative: read as %s", what, s, abs)
	return abs
}

// hasScheme reports whether s starts with a URI scheme and a colon.
func hasScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}
