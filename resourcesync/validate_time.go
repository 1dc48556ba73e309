package resourcesync

import "time"

// checkEntryTimes applies Appendix A to an entry, and the rules that tie
// its times to the header's interval and to the entries before it.
func (v *Validator) checkEntryTimes(e *Entry) {
	var md MD
	if e.MD != nil {
		md = *e.MD
	}
	switch k := v.kind; {
	case changeEntries(k):
		v.noEntryTimes(e.Line, &md)
		v.checkChangeTime(e)
	case k == KindChangeListIndex || k == KindChangeDumpIndex || k == KindChangeDump:
		v.unusedTimes(e.Line, "entry ", md.At, md.Completed, k)
		v.checkChildInterval(e.Line, md.From, md.Until)
	case k == KindResourceListIndex || k == KindResourceDumpIndex || k == KindResourceDump:
		v.unusedTimes(e.Line, "entry ", md.From, md.Until, k)
		v.checkChildSnapshot(e.Line, md.At, md.Completed)
	case k == KindResourceList || k == KindResourceDumpManifest:
		v.noEntryTimes(e.Line, &md)
		end := v.h.MD.Completed
		if end.IsZero() {
			end = v.h.MD.At
		}
		if !end.IsZero() && e.LastMod.After(end) {
			v.warnf(e.Line, "lastmod %s is after the snapshot (%s)", showTime(e.LastMod), showTime(end))
		}
	}
}

// noEntryTimes warns about interval attributes on an entry that stands
// for a single resource or change, which has none.
func (v *Validator) noEntryTimes(line int, md *MD) {
	if !md.At.IsZero() || !md.Completed.IsZero() || !md.From.IsZero() || !md.Until.IsZero() {
		v.warnf(line, "entry at/completed/from/until are not used in a %s", v.kind)
	}
}

// checkChangeTime checks that an entry records the time of its change.
func (v *Validator) checkChangeTime(e *Entry) {
	t := e.ChangeTime()
	if t.IsZero() {
		if v.kind != KindChangeNotification {
			v.warnf(e.Line, "entry has neither lastmod nor rs:md datetime: a Destination cannot order this change or resume after it")
		}
		return
	}
	// A time outside from/until, or before the one above it, is the
	// reader's warning (WarnOutsideInterval, WarnUnordered): the harvester
	// reads such lists, in time order.
}

// checkChildInterval checks the from/until of an entry that stands for a
// Change List (in a Change List Index), a Change Dump (in a Change Dump
// Index) or a package (in a Change Dump).
func (v *Validator) checkChildInterval(line int, from, until time.Time) {
	k := v.kind
	what := "Change List"
	order := v.errorf // "must" for Change List Indexes (12.2)
	switch k {
	case KindChangeDump:
		what, order = "package", v.warnf // "should" for Change Dumps (13.1)
	case KindChangeDumpIndex:
		what = "Change Dump"
	}
	if from.IsZero() {
		v.warnf(line, "%s entry has no rs:md from (recommended): a Destination cannot tell which changes it holds", what)
		if !until.IsZero() {
			v.checkInside(line, until)
		}
		return
	}
	if !until.IsZero() && until.Before(from) {
		v.errorf(line, "%s from %s is after its until %s", what, showTime(from), showTime(until))
	}
	v.checkInside(line, from)
	if !until.IsZero() {
		v.checkInside(line, until)
	} else if !v.h.MD.Until.IsZero() {
		v.errorf(line, "%s has no until but the %s is closed (until %s): it would never be read again",
			what, k, showTime(v.h.MD.Until))
	}
	switch {
	case v.prevOpenLine != 0:
		v.warnf(line, "%s at line %d has no until (still open) but another follows it", what, v.prevOpenLine)
	case !v.prevFrom.IsZero() && from.Before(v.prevFrom):
		order(line, "%s from %s is before the previous one's (%s): entries go in forward chronological order",
			what, showTime(from), showTime(v.prevFrom))
	case !v.prevUntil.IsZero() && from.After(v.prevUntil):
		v.warnf(line, "gap: %s starts at %s but the previous one ended at %s", what, showTime(from), showTime(v.prevUntil))
	case !v.prevUntil.IsZero() && from.Before(v.prevUntil):
		v.warnf(line, "%s from %s overlaps the previous one, which ends at %s", what, showTime(from), showTime(v.prevUntil))
	}
	v.prevFrom, v.prevUntil, v.prevOpenLine = from, until, 0
	if until.IsZero() {
		v.prevOpenLine = line
	}
}

// checkInside reports a child time outside the header's from/until.
func (v *Validator) checkInside(line int, t time.Time) {
	from, until := v.h.MD.From, v.h.MD.Until
	if !from.IsZero() && t.Before(from) {
		v.errorf(line, "%s is before the document's from %s", showTime(t), showTime(from))
	}
	if !until.IsZero() && t.After(until) {
		v.errorf(line, "%s is after the document's until %s", showTime(t), showTime(until))
	}
}

// checkChildSnapshot checks the at/completed of an entry that stands for a
// Resource List (in an index) or a package (in a Resource Dump): the part's
// snapshot lies within the whole's.
func (v *Validator) checkChildSnapshot(line int, at, completed time.Time) {
	if !at.IsZero() && !completed.IsZero() && completed.Before(at) {
		v.errorf(line, "entry completed %s is before its at %s", showTime(completed), showTime(at))
	}
	hat, hcompleted := v.h.MD.At, v.h.MD.Completed
	if !at.IsZero() && !hat.IsZero() && at.Before(hat) {
		v.warnf(line, "entry at %s is before the document's at %s", showTime(at), showTime(hat))
	}
	if !completed.IsZero() && !hcompleted.IsZero() && completed.After(hcompleted) {
		v.warnf(line, "entry completed %s is after the document's completed %s", showTime(completed), showTime(hcompleted))
	}
}

// checkEnd applies the rules that need the whole document.
func (v *Validator) checkEnd() {
	if v.report.Entries > 0 {
		return
	}
	switch v.kind {
	case KindSourceDescription:
		v.warnf(0, "Source Description lists no Capability List")
	case KindCapabilityList:
		v.warnf(0, "Capability List advertises no capability")
	}
}
