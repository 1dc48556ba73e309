package fixity

import "time"

// Status is what the status page shows of the audit.
type Status struct {
	// Enabled is false when fixity.bytes_per_second is 0.
	Enabled bool
	// Auditing is true while this node holds the audit's turn.
	Auditing bool
	// PassStarted is when the pass under way (or the last) began;
	// LastPass when the last complete pass ended. Zero before the first.
	PassStarted, LastPass time.Time
	// Bad is how many bad or missing copies this node's audit has found
	// since it started.
	Bad uint64
	// RepairsPending is how many of them are not yet back in the store.
	RepairsPending int
}

// Status reports the audit's state now.
func (a *Audit) Status() Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	return Status{Enabled: a.cfg.BytesPerSecond > 0, Auditing: a.auditing, PassStarted: a.cur.Started,
		LastPass: a.cur.Completed, Bad: a.bad, RepairsPending: len(a.pending)}
}
