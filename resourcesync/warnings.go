package resourcesync

import "fmt"

// WarningKind names one thing a Reader read although the specification
// says otherwise, because real Sources write it (docs/validation.md has
// the table: each kind, the producers that need it, what is done). The
// names are stable: a harvester counts warnings by kind in its metrics.
type WarningKind string

const (
	// WarnZonelessTime: a datetime without a time zone, read as UTC.
	WarnZonelessTime WarningKind = "zoneless-time"
	// WarnTimeForm: a datetime in a near-W3C form (a space for the T, an
	// offset without its colon, a lowercase z), read as meant.
	WarnTimeForm WarningKind = "time-form"
	// WarnNamespace: the Sitemap or ResourceSync namespace misspelt
	// (https, a trailing slash missing or added), read as the spec's.
	WarnNamespace WarningKind = "namespace-variant"
	// WarnCapabilityCase: a capability value not in lowercase
	// (capabilityList), read as the spec's value.
	WarnCapabilityCase WarningKind = "capability-case"
	// WarnDraft: the 0.9 draft's forms, capability="resourcesync" for a
	// Source Description and rel="resourcesync" for the link up to it,
	// read as the 1.0 ones.
	WarnDraft WarningKind = "draft-0.9"
	// WarnCapabilityVariant: a capability value no spec defines but a
	// producer writes (changelistindex), kept as written.
	WarnCapabilityVariant WarningKind = "capability-variant"
	// WarnDuplicateCapability: a Capability List with several entries for
	// one capability; every one of them is read.
	WarnDuplicateCapability WarningKind = "duplicate-capability"
	// WarnHashBase64: a md5, sha-1 or sha-256 digest in base64, read as
	// the digest it is (and rewritten in hex).
	WarnHashBase64 WarningKind = "hash-base64"
	// WarnHashUnreadable: a md5, sha-1 or sha-256 digest that is neither
	// hex nor base64 of the right length: kept, ignored for verification.
	WarnHashUnreadable WarningKind = "hash-unreadable"
	// WarnRelativeURI: a loc or href that is not absolute, resolved
	// against the document's URL (left as written when it is not known).
	WarnRelativeURI WarningKind = "relative-uri"
	// WarnNoAt: a snapshot document (Resource List, Resource Dump, their
	// indexes and manifests) without at.
	WarnNoAt WarningKind = "no-at"
	// WarnNoFrom: a change document without from (a notification, which
	// cannot be placed without it, is refused by its reader instead).
	WarnNoFrom WarningKind = "no-from"
	// WarnOutsideInterval: a change whose time lies before the document's
	// from or after its until; it is read all the same.
	WarnOutsideInterval WarningKind = "change-outside-interval"
	// WarnUnordered: a change earlier than the one before it; a reader of
	// the whole list puts them in order.
	WarnUnordered WarningKind = "changes-unordered"
)

// Warning is one kind of tolerance a document needed: how often, where
// first (0 for the document's header) and what, in words. A document has
// at most one Warning per kind, so that a harvester can count each once
// per document and a million zone-less times make one line.
type Warning struct {
	Kind  WarningKind
	Count int
	Line  int
	Msg   string
}

func (w Warning) String() string {
	s := w.Msg
	if w.Count > 1 {
		s += fmt.Sprintf(" (%d times)", w.Count)
	}
	return s
}

// Warnings returns what the document needed tolerated so far, one Warning
// per kind in the order first met. The harvester shows them; the
// validator reports them as warnings (or, when strict, errors).
func (r *Reader) Warnings() []Warning { return r.warns }

// where is the line a warning is reported at: the entry's opening tag,
// or 0 in the document's header, as the validator's problems are.
func (r *Reader) where() int {
	if r.entries == 0 || r.blk == nil {
		return 0
	}
	return r.blk.e.Line
}

// warn records one occurrence of kind; the message is made only for the
// first.
func (r *Reader) warn(kind WarningKind, line int, format string, args ...any) {
	for i := range r.warns {
		if r.warns[i].Kind == kind {
			r.warns[i].Count++
			return
		}
	}
	r.warns = append(r.warns, Warning{Kind: kind, Count: 1, Line: line, Msg: fmt.Sprintf(format, args...)})
}
