package harvester

import (
	"context"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// FetchProgress says how far the fetch workers are with a Source's
// changes: finished (acknowledged, fetched or not) and failed
// (dead-lettered), counted since the process started. The node gives the
// fetch pool; without one a baseline's progress reports only what was
// listed and queued.
type FetchProgress interface {
	Progress(source string) (finished, failed uint64)
}

// progressEvery is how often a baseline under way logs its progress.
const progressEvery = 5 * time.Second

// Progress is one line of a baseline's progress: what it has listed and
// queued, what the workers have finished of it, and how long the rest of
// what is queued should take at the rate so far.
type Progress struct {
	Source   string
	Listed   int64 // entries read from the Source's lists
	Queued   int64 // changes queued
	Fetched  int64 // changes the workers finished (acknowledged)
	Failed   int64 // changes dead-lettered
	Rate     float64
	Left     time.Duration // for what is queued; -1 when unknown
	Elapsed  time.Duration
	Finished bool
}

// attrs are the log line's fixed keys.
func (p Progress) attrs() []any {
	return []any{"listed", p.Listed, "queued", p.Queued, "fetched", p.Fetched, "failed", p.Failed,
		"rate", float64(int(p.Rate*10)) / 10, "eta", p.Left.Round(time.Second), "elapsed", p.Elapsed.Round(time.Second)}
}

// baselineProgress follows one baseline: counters read against their
// values when it began.
type baselineProgress struct {
	p                  *pass
	began              time.Time
	queued0            float64
	finished0, failed0 uint64
	listed             *atomic.Int64
}

// trackProgress logs the progress of the baseline beginning now every
// progressEvery (and through OnProgress), until the returned stop is
// called, which logs nothing: "baseline done" says the end.
func (p *pass) trackProgress(ctx context.Context) (stop func()) {
	bp := &baselineProgress{p: p, began: time.Now(), queued0: p.queuedSoFar(), listed: &p.listed}
	p.listed.Store(0)
	if fp := p.h.deps.Progress; fp != nil {
		bp.finished0, bp.failed0 = fp.Progress(p.src.Name)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(p.h.progressEvery())
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				pr := bp.read()
				p.log.Info("baseline progress", pr.attrs()...)
				if f := p.h.deps.OnProgress; f != nil {
					f(pr)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// read is the progress now.
func (bp *baselineProgress) read() Progress {
	p := bp.p
	pr := Progress{Source: p.src.Name, Listed: bp.listed.Load(), Queued: int64(p.queuedSoFar() - bp.queued0), Elapsed: time.Since(bp.began), Left: -1}
	if fp := p.h.deps.Progress; fp != nil {
		fin, failed := fp.Progress(p.src.Name)
		pr.Fetched, pr.Failed = int64(fin-bp.finished0), int64(failed-bp.failed0)
	}
	if s := pr.Elapsed.Seconds(); s > 0 {
		pr.Rate = float64(pr.Fetched+pr.Failed) / s
	}
	if left := pr.Queued - pr.Fetched - pr.Failed; pr.Rate > 0 && left >= 0 {
		pr.Left = time.Duration(float64(left) / pr.Rate * float64(time.Second))
	}
	return pr
}

// queuedSoFar is the number of changes queued for the Source since the
// process started.
func (p *pass) queuedSoFar() float64 {
	var sum float64
	for _, op := range []string{"created", "updated", "deleted"} {
		var m dto.Metric
		if p.h.m.changes.WithLabelValues(p.src.Name, op).Write(&m) == nil {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

func (h *Harvester) progressEvery() time.Duration {
	if h.deps.ProgressEvery > 0 {
		return h.deps.ProgressEvery
	}
	return progressEvery
}
