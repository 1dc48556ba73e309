package harvester

import (
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Kinds of what the harvester reads although a Source should not write it
// so (docs/harvesting.md, "Producers"), counted in
// viaduct_harvester_tolerated_total and shown on the status page. Where
// the document reader warns of the same thing its kind's name is used, so
// that one document shows one warning of each kind.
const (
	// tolSeveralSets: a Source Description (or its Index) lists several
	// Capability Lists; every one is harvested.
	tolSeveralSets = "several-capability-lists"
	// tolDuplicateCapability: a Capability List names a capability more
	// than once; every document named is read.
	tolDuplicateCapability = "duplicate-capability"
	// tolChangeListIndexEntry: capability="changelistindex" in a
	// Capability List, read as its Change List (Index).
	tolChangeListIndexEntry = "capability-variant"
	// tolCapabilityCase: a capability in other than lower case.
	tolCapabilityCase = "capability-case"
	// tolNoCapability: a Capability List entry without a capability,
	// which names nothing to harvest.
	tolNoCapability = "no-capability"
	// tolOutOfOrder: a Change List not in forward chronological order,
	// sorted by change time before it is applied.
	tolOutOfOrder = "changes-unordered"
	// tolPaged: a Resource List paged with rel="next", every page read.
	tolPaged = "paged-resource-list"
	// tolRelativeURI: a loc relative to its document, resolved against
	// the document's URL.
	tolRelativeURI = "relative-uri"
	// tolChangeListOnly: a Source offering Change Lists and no Resource
	// List or Dump, baselined from its Change Lists.
	tolChangeListOnly = "changelist-only"
	// tolUnlistedFile: a dump package holding files its manifest does not
	// list; they are ignored, the listed bitstreams verified and used.
	tolUnlistedFile = "unlisted-dump-file"
	// tolUnreadChangeDumps: Change Dumps beyond the first a Capability
	// List names; not read (the Change Lists cover their changes when
	// the Source offers them).
	tolUnreadChangeDumps = "unread-change-dumps"
)

// toleranceKinds are the kinds whose series are created up front.
var toleranceKinds = []string{tolSeveralSets, tolDuplicateCapability, tolChangeListIndexEntry, tolCapabilityCase,
	tolNoCapability, tolOutOfOrder, tolPaged, tolRelativeURI, tolChangeListOnly, tolUnlistedFile, tolUnreadChangeDumps}

// Warning is one document read with a tolerance, as the status page shows
// it: which document, what it did, how many entries (or pages, or sets)
// it concerned.
type Warning struct {
	Document string `json:"document"`
	Kind     string `json:"kind"`
	Count    int    `json:"count"`
}

type toleranceKey struct{ doc, kind string }

// tolerate notes that document doc was read although it does what kind
// says, n times. A document counts once per kind and pass in the metric,
// whatever n, and is logged once: at the first pass that finds it so, not
// again while it stays so (tolerations).
//
// The document reader's own warnings (zone-less times, the case of a
// capability, digests in base64) are passed here too, one line where a
// document is closed, so that the status page shows them alike.
func (p *pass) tolerate(doc, kind string, n int) {
	if p.tolerated == nil {
		p.tolerated = map[toleranceKey]int{}
	}
	p.tolerated[toleranceKey{doc, kind}] += n
}

// tolerateReader takes one warning of the document reader (its kind and
// count): the reader counts a kind once per document already, and where
// the harvester counted the same kind itself the larger count stands.
func (p *pass) tolerateReader(doc, kind string, n int) {
	if p.tolerated == nil {
		p.tolerated = map[toleranceKey]int{}
	}
	k := toleranceKey{doc, kind}
	p.tolerated[k] = max(p.tolerated[k], n)
}

// tolerations remembers, per Source, the tolerances logged at its last
// pass, so that a Source read the same way every five minutes is logged
// once, not every pass.
type tolerations struct {
	mu   sync.Mutex
	prev map[string]map[toleranceKey]bool
}

// maxWarnings bounds the warnings a Source's status keeps and the
// documents whose tolerances are remembered between passes.
const maxWarnings = 256

// endTolerances counts, logs (when new) and returns the pass's
// tolerances, sorted by document and kind.
func (p *pass) endTolerances() []Warning {
	out := make([]Warning, 0, len(p.tolerated))
	for k, n := range p.tolerated {
		out = append(out, Warning{Document: k.doc, Kind: k.kind, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Document != out[j].Document {
			return out[i].Document < out[j].Document
		}
		return out[i].Kind < out[j].Kind
	})
	tl := &p.h.tol
	tl.mu.Lock()
	prev := tl.prev[p.src.Name]
	now := map[toleranceKey]bool{}
	for _, w := range out {
		k := toleranceKey{w.Document, w.Kind}
		p.h.m.tolerated.WithLabelValues(p.src.Name, w.Kind).Inc()
		if len(now) < maxWarnings {
			now[k] = true
		}
		if !prev[k] {
			p.log.Warn("document read with a tolerance", "uri", w.Document, "kind", w.Kind, "count", w.Count)
		}
	}
	if tl.prev == nil {
		tl.prev = map[string]map[toleranceKey]bool{}
	}
	tl.prev[p.src.Name] = now
	tl.mu.Unlock()
	if len(out) > maxWarnings {
		out = out[:maxWarnings]
	}
	return out
}

func newToleratedMetric(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "viaduct", Subsystem: "harvester", Name: "tolerated_total",
		Help: "Documents read although the Source should not write them so (out of order, several capability lists, paged...), once per document, kind and pass."},
		[]string{"source", "kind"})
	if reg != nil {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}
