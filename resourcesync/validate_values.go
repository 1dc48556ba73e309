package resourcesync

import "strings"

// maxPri is the largest pri value (RFC 6249, spec section 7).
const maxPri = 999999

// checkValues checks the attributes that rs:md and rs:ln share: hash,
// length and type. where prefixes messages ("rel=\"duplicate\" link: ").
func (v *Validator) checkValues(line int, where string, length *int64, typ string) {
	// Digests in base64, or unreadable, are the reader's warnings
	// (WarnHashBase64, WarnHashUnreadable).
	if length != nil && *length < 0 {
		v.errorf(line, "%slength %d is negative", where, *length)
	}
	if typ != "" {
		mt, _, _ := strings.Cut(typ, ";")
		if a, b, ok := strings.Cut(strings.TrimSpace(mt), "/"); !ok || a == "" || b == "" {
			v.warnf(line, "%stype %q is not a media type", where, typ)
		}
	}
}

// checkLinks checks the rs:ln elements of the header (line 0) or of an
// entry.
func (v *Validator) checkLinks(line int, where string, links []Link) {
	for i := range links {
		l := &links[i]
		switch {
		case l.Rel == "" && l.Href == "":
			v.errorf(line, "%srs:ln without rel and href", where)
			continue
		case l.Rel == "":
			v.errorf(line, "%srs:ln to %s has no rel", where, l.Href)
		case l.Href == "":
			v.errorf(line, "%srs:ln rel=%q has no href", where, l.Rel)
			continue
		}
		v.checkURI(line, where+"rs:ln href", l.Href, false)
		if l.Pri < 0 || l.Pri > maxPri {
			v.warnf(line, "%srs:ln rel=%q: pri %d is outside 1 to %d", where, l.Rel, l.Pri, maxPri)
		}
		v.checkValues(line, where+"rs:ln rel=\""+l.Rel+"\": ", l.Length, l.Type)
	}
}
