package resourcesync

import "time"

// snapshotKind reports whether documents of kind k describe a snapshot (at
// and completed) rather than changes over an interval (from and until).
func snapshotKind(k Kind) bool {
	switch k {
	case KindResourceList, KindResourceListIndex, KindResourceDump,
		KindResourceDumpIndex, KindResourceDumpManifest:
		return true
	}
	return false
}

// changeKind reports whether documents of kind k record changes over a
// from/until interval.
func changeKind(k Kind) bool {
	switch k {
	case KindChangeList, KindChangeListIndex, KindChangeDump,
		KindChangeDumpIndex, KindChangeDumpManifest, KindChangeNotification:
		return true
	}
	return false
}

// indexKind reports whether k is one of the sitemapindex document types.
func indexKind(k Kind) bool {
	switch k {
	case KindResourceListIndex, KindChangeListIndex, KindResourceDumpIndex, KindChangeDumpIndex:
		return true
	}
	return false
}

// changeEntries reports whether each entry of a kind-k document records one
// change (and so needs the change attribute and forward chronological order).
func changeEntries(k Kind) bool {
	return k == KindChangeList || k == KindChangeDumpManifest || k == KindChangeNotification
}

// checkHeader applies the rules of sections 7 to 13, Appendix A and the
// notification spec to the document's root, its rs:md and its rs:ln links.
func (v *Validator) checkHeader() {
	h, k := v.h, v.kind
	switch k {
	case KindSitemap:
		v.errorf(0, "root rs:md has no capability attribute: a plain Sitemap, not a ResourceSync document")
	case KindUnknown:
		v.errorf(0, "unknown capability %q in the root rs:md", h.MD.Capability)
	case KindCapabilityList:
		if h.Root == SitemapIndex {
			v.warnf(0, "Capability List as a sitemapindex: the spec asks Sources not to publish Capability List Indexes")
		}
	case KindResourceDumpManifest, KindChangeDumpManifest, KindChangeNotification:
		if h.Root == SitemapIndex {
			v.errorf(0, "%s must have a urlset root, not sitemapindex", k)
		}
	}
	v.checkHeaderTimes()
	v.checkHeaderLinks()
	if h.MD.Change != "" {
		v.warnf(0, "change attribute on the root rs:md: it belongs on entries")
	}
}

func (v *Validator) checkHeaderTimes() {
	md, k := &v.h.MD, v.kind
	switch {
	case snapshotKind(k):
		if !md.At.IsZero() && !md.Completed.IsZero() && md.Completed.Before(md.At) {
			v.errorf(0, "completed %s is before at %s", showTime(md.Completed), showTime(md.At))
		}
		v.unusedTimes(0, "", md.From, md.Until, k)
	case changeKind(k):
		// A missing at or from is the reader's warning (WarnNoAt,
		// WarnNoFrom), but a notification is refused without its interval.
		if k == KindChangeNotification && md.From.IsZero() {
			v.errorf(0, "Change Notification has no from attribute: a Destination cannot tell which changes it covers")
		}
		if k == KindChangeNotification && md.Until.IsZero() {
			v.errorf(0, "Change Notification has no until attribute: a Destination cannot detect gaps between notifications")
		}
		if !md.From.IsZero() && !md.Until.IsZero() && md.Until.Before(md.From) {
			v.errorf(0, "from %s is after until %s", showTime(md.From), showTime(md.Until))
		}
		v.unusedTimes(0, "", md.At, md.Completed, k)
	case k == KindSourceDescription || k == KindCapabilityList:
		for _, t := range []time.Time{md.At, md.Completed, md.From, md.Until} {
			if !t.IsZero() {
				v.warnf(0, "%s carries time attributes (at/completed/from/until), which the spec does not use there", k)
				break
			}
		}
	}
}

// unusedTimes warns about the pair of time attributes that a document type
// does not use (at/completed on change documents, from/until on snapshots).
func (v *Validator) unusedTimes(line int, where string, a, b time.Time, k Kind) {
	if a.IsZero() && b.IsZero() {
		return
	}
	pair := "from/until"
	if changeKind(k) {
		pair = "at/completed"
	}
	v.warnf(line, "%s%s is not used in a %s", where, pair, k)
}

// parentOf names what a document's rel="up" link must point to.
func parentOf(k Kind) string {
	switch k {
	case KindCapabilityList:
		return "the Source Description"
	case KindSourceDescription, KindSitemap, KindUnknown:
		return ""
	}
	return "its Capability List"
}

func (v *Validator) checkHeaderLinks() {
	k := v.kind
	v.checkLinks(0, "root ", v.h.Links)
	ups := 0
	for i := range v.h.Links {
		l := &v.h.Links[i]
		switch l.Rel {
		case "up":
			ups++
			if v.opts.Up != "" && l.Href != "" && l.Href != v.opts.Up {
				v.warnf(0, "rel=\"up\" link points to %s, not to %s", l.Href, v.opts.Up)
			}
		case "index":
			switch {
			case indexKind(k):
				v.warnf(0, "%s has a rel=\"index\" link: only the documents an index groups point to it", k)
			case k == KindSourceDescription, k == KindCapabilityList, k == KindResourceDumpManifest,
				k == KindChangeDumpManifest, k == KindChangeNotification:
				v.warnf(0, "rel=\"index\" link is not used in a %s", k)
			}
		}
	}
	switch {
	case ups > 1:
		v.warnf(0, "%d rel=\"up\" links; the spec has one", ups)
	case ups == 1 && k == KindSourceDescription:
		v.warnf(0, "Source Description has a rel=\"up\" link, but it is the top of the Source")
	case ups == 0 && parentOf(k) != "" && k != KindChangeNotification:
		v.warnf(0, "%s has no rel=\"up\" link to %s (mandatory in the spec)", k, parentOf(k))
	}
}
