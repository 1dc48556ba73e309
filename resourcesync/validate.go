package resourcesync

import (
	"fmt"
	"time"
)

// Severity says whether a Problem stops a Destination from synchronising
// (SeverityError) or only departs from the spec in a way Destinations can
// live with (SeverityWarning). docs/validation.md draws the line rule by rule.
type Severity int

const (
	SeverityError Severity = iota
	SeverityWarning
)

func (s Severity) String() string {
	if s == SeverityWarning {
		return "warning"
	}
	return "error"
}

// Problem is one finding of a Validator. Line is the line of the entry it
// concerns, or zero when it concerns the document as a whole (its root
// element and header).
type Problem struct {
	Line     int
	Severity Severity
	Msg      string
}

func (p Problem) String() string {
	if p.Line == 0 {
		return fmt.Sprintf("%s: %s", p.Severity, p.Msg)
	}
	return fmt.Sprintf("%d: %s: %s", p.Line, p.Severity, p.Msg)
}

// Summary says what a validated document is: its type, how many entries it
// has and the interval its header declares (at/completed for snapshots,
// from/until for changes; zero times are absent attributes).
type Summary struct {
	Kind      Kind
	Entries   int
	At        time.Time
	Completed time.Time
	From      time.Time
	Until     time.Time
}

// Report is the outcome of validating one document. Problems are in the
// order found, at most Options.MaxProblems of them; Errors and Warnings
// count every problem, kept or not.
type Report struct {
	Summary
	Problems []Problem
	Errors   int
	Warnings int
	// Dropped is how many problems were counted but not kept.
	Dropped int
}

// OK reports whether the document has no error (and, when strict, no
// warning either).
func (r *Report) OK(strict bool) bool {
	return r.Errors == 0 && (!strict || r.Warnings == 0)
}

// DefaultMaxProblems bounds how many problems a Report keeps, so that a
// document with a million bad entries does not make a million messages.
const DefaultMaxProblems = 1000

// Options tune a Validator. The zero value is ready to use.
type Options struct {
	// MaxProblems is how many problems a Report keeps; 0 means
	// DefaultMaxProblems. The rest are only counted.
	MaxProblems int
	// Base, when set, is the URL the document was read from: relative
	// URIs are resolved against it, as the harvester does.
	Base string
	// Up, when set, is the URI of the document that led to this one (the
	// Source Description for a Capability List, the Capability List for a
	// capability document). A rel="up" link pointing elsewhere is a warning.
	Up string
}

// Validator checks one document against the ResourceSync specifications as
// it streams by: the header first (NewValidator), then each entry (Entry),
// then Finish. What a tolerant reader reads although the spec says
// otherwise is not its to judge: Validate adds the Reader's Warnings, so
// that a document gets one verdict, the harvester's. It keeps only a constant amount of state per document, so its
// memory does not grow with the number of entries.
type Validator struct {
	opts   Options
	h      *Header
	kind   Kind
	report Report

	// state for the rules that compare an entry with the ones before it
	prevFrom     time.Time // from of the last child list/package
	prevUntil    time.Time
	prevOpenLine int // line of a child list without until, if any
	pkgType      string
}

// NewValidator starts validating the document whose header is h and checks
// the header.
func NewValidator(h *Header, opts Options) *Validator {
	if opts.MaxProblems <= 0 {
		opts.MaxProblems = DefaultMaxProblems
	}
	v := &Validator{opts: opts, h: h, kind: h.Kind()}
	v.report.Summary = Summary{
		Kind:      v.kind,
		At:        h.MD.At,
		Completed: h.MD.Completed,
		From:      h.MD.From,
		Until:     h.MD.Until,
	}
	v.checkHeader()
	return v
}

// Add records a problem found elsewhere, for example a reader error about
// one entry, so that it is reported with the others.
func (v *Validator) Add(p Problem) {
	if p.Severity == SeverityWarning {
		v.report.Warnings++
	} else {
		v.report.Errors++
	}
	if len(v.report.Problems) >= v.opts.MaxProblems {
		v.report.Dropped++
		return
	}
	v.report.Problems = append(v.report.Problems, p)
}

func (v *Validator) errorf(line int, format string, args ...any) {
	v.Add(Problem{Line: line, Severity: SeverityError, Msg: fmt.Sprintf(format, args...)})
}

func (v *Validator) warnf(line int, format string, args ...any) {
	v.Add(Problem{Line: line, Severity: SeverityWarning, Msg: fmt.Sprintf(format, args...)})
}

// Entry checks one entry, in document order.
func (v *Validator) Entry(e *Entry) {
	v.report.Entries++
	if v.report.Entries == SitemapMaxEntries+1 {
		v.warnf(e.Line, "more than %d entries: the spec asks for an index of smaller documents", SitemapMaxEntries)
	}
	v.checkEntry(e)
}

// Finish ends the document and returns the report.
func (v *Validator) Finish() *Report {
	v.checkEnd()
	r := v.report
	return &r
}

// SitemapMaxEntries is the community limit on entries in one Sitemap
// document that the spec adopts (section 7).
const SitemapMaxEntries = 50000

// showTime writes a time for a message, in the form the spec recommends.
func showTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
