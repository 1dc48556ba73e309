package harvester

import (
	"hash/maphash"
	"log/slog"
	"sort"
	"sync"
)

// Refused entries (unreadable, outside the Source's Policy, without a
// change or a time) are counted one by one but logged once per document
// and pass: how many, of which kind, a few examples. A Source that lists a
// million bad locs writes one line per document, not a million, and a
// document whose refusals are the same as at the last pass writes none:
// a refusal seen before is counted again, not logged again.
const (
	refusalExamples = 3    // examples per kind in a summary line
	refusalMemory   = 4096 // refusals remembered per document between passes
	refusalDocs     = 1024 // documents remembered per Source between passes
)

// refusalTally is what one pass refused in one document.
type refusalTally struct {
	total, fresh int
	kinds        map[string]int
	examples     map[string][]string // of refusals not seen at the last pass
	seen         map[uint64]struct{} // up to refusalMemory
	sum          uint64              // of every refusal's hash: the document's refusals in one number
}

// refusalPrev is what the last pass refused in one document.
type refusalPrev struct {
	total int
	sum   uint64
	seen  map[uint64]struct{}
}

// refusalLog is a Source's memory of refusals between passes.
type refusalLog struct {
	mu   sync.Mutex
	seed maphash.Seed
	prev map[string]*refusalPrev // by document URI
}

func newRefusalLog() *refusalLog {
	return &refusalLog{seed: maphash.MakeSeed(), prev: map[string]*refusalPrev{}}
}

// refuse records that an entry of document uri was refused: kind is the
// metric's kind, key tells this refusal from others of the document (the
// loc, or the line and error of an unreadable entry), example is what a
// summary shows of it, made only for the few examples shown.
func (p *pass) refuse(uri, kind, key string, example func() string) {
	p.h.m.errors.WithLabelValues(p.src.Name, kind).Inc()
	rl := p.src.refusals
	if p.refusedIn == nil {
		p.refusedIn = map[string]*refusalTally{}
	}
	t := p.refusedIn[uri]
	if t == nil {
		t = &refusalTally{kinds: map[string]int{}, examples: map[string][]string{}, seen: map[uint64]struct{}{}}
		p.refusedIn[uri] = t
	}
	h := maphash.String(rl.seed, kind+"\x00"+key)
	t.total++
	t.kinds[kind]++
	t.sum += h
	if len(t.seen) < refusalMemory {
		t.seen[h] = struct{}{}
	}
	rl.mu.Lock()
	prev := rl.prev[uri]
	rl.mu.Unlock()
	if prev != nil {
		if _, ok := prev.seen[h]; ok {
			return
		}
	}
	t.fresh++
	if ex := t.examples[kind]; len(ex) < refusalExamples {
		t.examples[kind] = append(ex, example())
	}
}

// logRefusals writes the summary of each document's refusals in this
// pass, unless they are the very refusals of the last pass, and
// remembers them for the next.
func (p *pass) logRefusals() {
	if len(p.refusedIn) == 0 {
		return
	}
	rl := p.src.refusals
	uris := make([]string, 0, len(p.refusedIn))
	for u := range p.refusedIn {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	for _, uri := range uris {
		t := p.refusedIn[uri]
		rl.mu.Lock()
		prev := rl.prev[uri]
		if prev == nil && len(rl.prev) >= refusalDocs {
			for k := range rl.prev { // forget one, any
				delete(rl.prev, k)
				break
			}
		}
		rl.prev[uri] = &refusalPrev{total: t.total, sum: t.sum, seen: t.seen}
		rl.mu.Unlock()
		if prev != nil && (t.fresh == 0 || prev.total == t.total && prev.sum == t.sum) {
			continue // the refusals of the last pass, seen again: counted, not logged
		}
		attrs := []any{"uri", uri, "refused", t.total, "new", t.fresh}
		kinds := make([]string, 0, len(t.kinds))
		for k := range t.kinds {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			attrs = append(attrs, slog.Group(k, "count", t.kinds[k], "examples", t.examples[k]))
		}
		p.log.Warn("entries refused, not queued", attrs...)
	}
	p.refusedIn = nil
}
