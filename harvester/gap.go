package harvester

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// How a gap was closed, the closed_by label of viaduct_harvester_gaps_total.
const (
	// GapIndex: the Capability List offers a Change List Index (or
	// another Change List) that still reaches back to the cursor; it was
	// walked instead.
	GapIndex = "index"
	// GapBaseline: nothing offered reaches back; a baseline compared the
	// whole Resource List (or Dump) with the catalog, deletions included,
	// and the cursor restarted from its at.
	GapBaseline = "baseline"
	// GapNone: nothing offered reaches back and the Source offers no
	// Resource List or Dump to baseline from (a Source of Change Lists
	// only). The changes still offered are applied; what the Source
	// pruned is lost upstream, and the status page and the metric say so.
	GapNone = "none"
)

// Gap is one time a Source's Change Lists (or Change Dumps) no longer
// reached back to the cursor: pruned, rotated, or only the newest named.
type Gap struct {
	Found time.Time `json:"found"`
	// Document is the Change List, Index or Change Dump that starts
	// after the cursor.
	Document string `json:"document"`
	// Cursor is where the harvester had got to; Earliest the earliest
	// time Document still covers.
	Cursor   time.Time `json:"cursor"`
	Earliest time.Time `json:"earliest"`
	// ClosedBy is index, baseline or none (GapIndex...).
	ClosedBy string `json:"closed_by"`
}

// gapError is returned by a walk of Change Lists or Change Dumps that
// finds they start after the cursor; nothing of them has been queued and
// the cursor has not moved.
type gapError struct {
	doc      string
	cursor   time.Time
	earliest time.Time
}

func (e *gapError) Error() string {
	return fmt.Sprintf("%s covers changes from %s only, the cursor is at %s", e.doc, resourcesync.FormatTime(e.earliest), resourcesync.FormatTime(e.cursor))
}

// covers is the one rule for Change Lists, Change List Indexes and Change
// Dumps (and, through the Change List poll a notification gap asks for,
// for notifications): a document whose earliest time is after the
// cursor leaves a window nobody read, so it must not be applied before
// the gap is closed. A cursor never set (nothing harvested yet) and a
// document that states no time cover everything.
func (p *pass) covers(doc string, earliest time.Time) error {
	if p.st.changes.IsZero() || earliest.IsZero() || !earliest.After(p.st.changes) {
		return nil
	}
	return &gapError{doc: doc, cursor: p.st.changes, earliest: earliest}
}

// earliest is the earliest from of the children of an index; zero when
// one of them states none (it is then not known).
func earliest(children []child) time.Time {
	var t time.Time
	for _, c := range children {
		if c.From.IsZero() {
			return time.Time{}
		}
		if t.IsZero() || c.From.Before(t) {
			t = c.From
		}
	}
	return t
}

// closedGap records a gap and how it was closed: logged once (here, the
// pass that closes it), counted, and kept for the status page.
func (p *pass) closedGap(err error, how string) {
	var g *gapError
	if !errors.As(err, &g) {
		return
	}
	rec := Gap{Found: time.Now(), Document: g.doc, Cursor: g.cursor, Earliest: g.earliest, ClosedBy: how}
	p.gaps = append(p.gaps, rec)
	p.h.m.gaps.WithLabelValues(p.src.Name, how).Inc()
	// An Index that reaches back is how DSpace is meant to be read: it
	// is worth a line, not a warning. A baseline costs a whole listing;
	// nothing to close it with loses changes.
	level := p.log.Warn
	switch how {
	case GapIndex:
		level = p.log.Info
	case GapNone:
		level = p.log.Error
	}
	level("gap in the Source's changes", "uri", g.doc, "cursor", g.cursor, "earliest", g.earliest, "closed_by", how)
}

// gapKinds are the closed_by values whose series are created up front.
var gapKinds = []string{GapIndex, GapBaseline, GapNone}

func newGapMetric(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "viaduct", Subsystem: "harvester", Name: "gaps_total",
		Help: "Times the Source's Change Lists or Change Dumps no longer reached back to the cursor, by how the gap was closed (index, baseline, none)."},
		[]string{"source", "closed_by"})
	if reg != nil {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}
