package resourcesync

import (
	"net/url"
	"strings"
)

// checkEntry applies the per-entry rules; the rules that compare an entry
// with the header's interval or with earlier entries live in
// validate_time.go.
func (v *Validator) checkEntry(e *Entry) {
	line := e.Line
	switch {
	case e.Loc == "":
		v.errorf(line, "entry has no loc")
	default:
		v.checkURI(line, "loc", e.Loc, true)
	}
	if e.ChangeFreq != "" && !knownChangeFreq(e.ChangeFreq) {
		v.warnf(line, "changefreq %q is not one of always, hourly, daily, weekly, monthly, yearly, never", e.ChangeFreq)
	}
	if e.MD != nil {
		v.checkValues(line, "", e.MD.Length, e.MD.Type)
	}
	v.checkLinks(line, "", e.Links)
	v.checkEntryCapability(e)
	v.checkEntryChange(e)
	v.checkEntryTimes(e)
	v.checkPackage(e)
	v.checkPath(e)
}

func knownChangeFreq(s string) bool {
	switch s {
	case "always", "hourly", "daily", "weekly", "monthly", "yearly", "never":
		return true
	}
	return false
}

// knownCapability reports whether s is a capability value of the core or
// notification spec.
func knownCapability(s string) bool {
	switch s {
	case CapDescription, CapCapabilityList, CapResourceList, CapChangeList,
		CapResourceDump, CapChangeDump, CapResourceDumpManifest,
		CapChangeDumpManifest, CapChangeNotification:
		return true
	}
	return false
}

// archiveCapability reports whether s is one of the values the
// ResourceSync Archiving spec adds, which Capability Lists may advertise
// but this validator does not check further.
func archiveCapability(s string) bool {
	switch s {
	case "resourcelist-archive", "changelist-archive", "resourcedump-archive", "changedump-archive":
		return true
	}
	return false
}

// capListTarget reports whether a Capability List may point to a document
// with capability s.
func capListTarget(s string) bool {
	switch s {
	case CapResourceList, CapChangeList, CapResourceDump, CapChangeDump, CapChangeNotification:
		return true
	}
	return false
}

func (v *Validator) checkEntryCapability(e *Entry) {
	line, capa := e.Line, ""
	if e.MD != nil {
		capa = e.MD.Capability
	}
	switch v.kind {
	case KindSourceDescription:
		switch {
		case e.MD == nil:
		case capa == "":
			v.warnf(line, "rs:md without capability: in a Source Description it says capability=\"capabilitylist\"")
		case !knownCapability(capa):
			v.errorf(line, "unknown capability %q", capa)
		case capa != CapCapabilityList:
			v.errorf(line, "capability %q: a Source Description lists Capability Lists only", capa)
		}
	case KindCapabilityList:
		switch {
		case capa == "":
			v.errorf(line, "entry has no rs:md capability: a Destination cannot tell what %s is", e.Loc)
		case capa == "changelistindex":
			// the reader's WarnCapabilityVariant
		case archiveCapability(capa):
			v.warnf(line, "capability %q comes from the Archiving spec and is not checked here", capa)
		case !knownCapability(capa):
			v.errorf(line, "unknown capability %q", capa)
		case !capListTarget(capa):
			v.errorf(line, "capability %q: a Capability List points to resourcelist, changelist, resourcedump, changedump or change-notification documents", capa)
		default:
			// A second entry for a capability is the reader's warning
			// (WarnDuplicateCapability): every one is harvested.
			if capa == CapChangeNotification {
				if l := e.Link("hub"); l == nil || l.Href == "" {
					v.errorf(line, "change-notification entry has no rel=\"hub\" link: a Destination cannot subscribe")
				}
			}
		}
	default:
		switch {
		case capa == "":
		case !knownCapability(capa) && !archiveCapability(capa):
			v.errorf(line, "unknown capability %q", capa)
		default:
			v.warnf(line, "capability on an entry is only used in Source Descriptions and Capability Lists")
		}
	}
}

func (v *Validator) checkEntryChange(e *Entry) {
	change := ""
	if e.MD != nil {
		change = e.MD.Change
	}
	valid := change == Created || change == Updated || change == Deleted
	switch {
	case change == "" && changeEntries(v.kind):
		v.errorf(e.Line, "entry has no rs:md change attribute: a Destination cannot tell what happened to %s", e.Loc)
	case change != "" && !valid:
		v.errorf(e.Line, "change %q is not created, updated or deleted", change)
	case change != "" && !changeEntries(v.kind):
		v.warnf(e.Line, "change attribute is not used in a %s", v.kind)
	}
}

// checkPackage applies the recommendations on the entries of Resource and
// Change Dumps, which point to ZIP packages.
func (v *Validator) checkPackage(e *Entry) {
	if v.kind != KindResourceDump && v.kind != KindChangeDump {
		return
	}
	md := e.MD
	if md == nil || md.Type == "" || md.Length == nil {
		v.warnf(e.Line, "package entry lacks rs:md type and length (recommended, type=\"application/zip\")")
	}
	if md == nil || md.Type == "" {
		return
	}
	if mt, _, _ := strings.Cut(md.Type, ";"); strings.TrimSpace(mt) != "application/zip" {
		v.warnf(e.Line, "package type %q: the spec's package format is ZIP (application/zip)", md.Type)
	}
	switch {
	case v.pkgType == "":
		v.pkgType = md.Type
	case v.pkgType != md.Type:
		v.warnf(e.Line, "package type %q differs from %q: a %s should point to packages of one format", md.Type, v.pkgType, v.kind)
	}
}

// checkPath applies the rules on the path attribute, which locates a
// bitstream inside a dump package.
func (v *Validator) checkPath(e *Entry) {
	path := ""
	if e.MD != nil {
		path = e.MD.Path
	}
	switch v.kind {
	case KindResourceDumpManifest:
		if path == "" {
			v.errorf(e.Line, "entry has no rs:md path: a Destination cannot find %s in the package", e.Loc)
		}
	case KindChangeDumpManifest:
		if path == "" && e.MD != nil && e.MD.Change != Deleted {
			v.errorf(e.Line, "entry has no rs:md path: a Destination cannot find %s in the package (only deletions go without)", e.Loc)
		}
	default:
		if path != "" {
			v.warnf(e.Line, "path is only used in Resource and Change Dump Manifests")
		}
		return
	}
	if path == "" {
		return
	}
	if !strings.HasPrefix(path, "/") {
		v.warnf(e.Line, "path %q does not start with /", path)
	}
	for _, seg := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			v.errorf(e.Line, "path %q leaves the package", path)
			break
		}
	}
}

// checkURI checks a loc or href: it must be absolute to be dereferenced.
// A loc that is not is an error, an href a warning.
func (v *Validator) checkURI(line int, what, s string, loc bool) {
	u, err := url.Parse(s)
	report := v.warnf
	if loc {
		report = v.errorf
	}
	switch {
	case err != nil:
		report(line, "%s %q is not a URI: %v", what, s, err)
	case u.Scheme == "":
		// relative: the reader resolves it against the document's URL,
		// with its warning (WarnRelativeURI)
	case u.Host == "" && u.Opaque == "":
		report(line, "%s %q is not an absolute URI", what, s)
	case u.Scheme != "http" && u.Scheme != "https":
		v.warnf(line, "%s %q is not an http or https URI", what, s)
	}
}
