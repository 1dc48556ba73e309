package fixity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// pageSize is how many held resources the walk reads at a time.
const pageSize = 256

// Audit is the fixity audit of one node. Run it with Run; Status and the
// metrics say what it found.
type Audit struct {
	cfg  Config
	deps Deps
	log  *slog.Logger
	m    *metrics
	pace *pacer // bytes
	open *pacer // blobs
	buf  []byte // the read buffer of check, which runs on one goroutine

	mu       sync.Mutex
	cur      cursor
	auditing bool
	bad      uint64
	// pending are the blobs whose repair was asked, by key, with the
	// resources asked for; see repair.go.
	pending  map[string]*pendingRepair
	followed time.Time // when followRepairs last looked
}

// New checks cfg and deps and makes an audit; it reads nothing yet. Its
// metrics are registered whether the audit is on or off.
func New(cfg Config, deps Deps) (*Audit, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if deps.Catalog == nil || deps.Blobs == nil || deps.Quarantine == nil || deps.Changes == nil {
		return nil, errors.New("fixity: catalog, blob store, quarantine and changes are required")
	}
	if deps.Turn == nil {
		deps.Turn = Solo{}
	}
	if deps.TurnRetry <= 0 {
		deps.TurnRetry = time.Minute
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Sleep == nil {
		deps.Sleep = sleepCtx
	}
	m, err := newMetrics(deps.Registerer)
	if err != nil {
		return nil, fmt.Errorf("fixity: metrics: %w", err)
	}
	a := &Audit{cfg: cfg, deps: deps, log: deps.Logger, m: m, pending: map[string]*pendingRepair{}}
	m.budget.Set(float64(cfg.BytesPerSecond))
	if cfg.BytesPerSecond > 0 {
		a.pace = newPacer(cfg.BytesPerSecond, readChunk, deps.Now, deps.Sleep)
		a.open = newPacer(cfg.BlobsPerSecond, 1, deps.Now, deps.Sleep)
	}
	return a, nil
}

// Run audits while this node holds the turn, asking for it again every
// TurnRetry while it does not, until ctx ends. It returns nil at once
// when the audit is off.
func (a *Audit) Run(ctx context.Context) error {
	if a.pace == nil {
		a.log.Info("fixity audit off (fixity.bytes_per_second is 0): stored copies are not read back")
		return nil
	}
	for {
		run, release, ok, err := a.deps.Turn.Take(ctx)
		switch {
		case err != nil:
			a.log.WarnContext(ctx, "fixity: asking for the audit's turn failed; asking again later", "err", err)
		case ok:
			a.setAuditing(true)
			err := a.audit(run)
			a.setAuditing(false)
			release()
			if err != nil && ctx.Err() == nil && run.Err() == nil {
				a.log.ErrorContext(ctx, "fixity: audit stopped; it starts again from its cursor", "err", err)
			}
		}
		if err := a.deps.Sleep(ctx, a.deps.TurnRetry); err != nil {
			return nil
		}
	}
}

func (a *Audit) setAuditing(on bool) {
	a.mu.Lock()
	a.auditing = on
	a.mu.Unlock()
}

// audit runs passes from the saved cursor until ctx ends or an error
// stops it.
func (a *Audit) audit(ctx context.Context) error {
	c, err := loadCursor(ctx, a.deps.Catalog)
	if err != nil {
		a.log.WarnContext(ctx, "fixity: cursor unreadable; the pass starts from the beginning", "err", err)
	}
	a.setCursor(c)
	if !c.Completed.IsZero() {
		a.m.lastPass.Set(float64(c.Completed.Unix()))
	}
	for {
		a.mu.Lock()
		done, next := a.cur.complete(), a.cur.Started.Add(a.cfg.Every)
		a.mu.Unlock()
		if done {
			if err := a.deps.Sleep(ctx, next.Sub(a.deps.Now())); err != nil {
				return err
			}
			a.mu.Lock()
			a.cur = cursor{Completed: a.cur.Completed}
			a.mu.Unlock()
		}
		if err := a.pass(ctx); err != nil {
			return err
		}
	}
}

// pass walks the catalog from the cursor to its end, checking each copy,
// and records the pass complete.
func (a *Audit) pass(ctx context.Context) error {
	a.mu.Lock()
	if a.cur.Started.IsZero() {
		a.cur.Started = a.deps.Now()
		a.cur.Bad = 0
		a.log.InfoContext(ctx, "fixity: pass started", "bytes_per_second", a.cfg.BytesPerSecond, "blobs_per_second", a.cfg.BlobsPerSecond)
	} else if a.cur.Collection != "" || a.cur.URI != "" {
		a.log.InfoContext(ctx, "fixity: pass resumed", "collection", a.cur.Collection, "uri", a.cur.URI, "started", a.cur.Started)
	}
	c := a.cur
	a.mu.Unlock()
	a.m.passStart.Set(float64(c.Started.Unix()))
	saved := a.deps.Now()
	for {
		page, err := a.deps.Catalog.HeldCopies(ctx, c.Collection, c.URI, pageSize)
		if err != nil {
			return err
		}
		seen := map[string]bool{} // a blob shared by resources of a page is read once
		for i := range page {
			h := &page[i]
			if !seen[h.SHA256] {
				seen[h.SHA256] = true
				if err := a.check(ctx, h); err != nil {
					return err
				}
			}
			c = a.advance(h.Collection, h.URI)
		}
		a.followRepairs(ctx)
		if len(page) < pageSize {
			break
		}
		if now := a.deps.Now(); now.Sub(saved) >= saveEvery {
			if err := saveCursor(ctx, a.deps.Catalog, c); err != nil {
				return err
			}
			saved = now
		}
	}
	a.mu.Lock()
	a.cur.Collection, a.cur.URI, a.cur.Completed = "", "", a.deps.Now()
	c = a.cur
	a.mu.Unlock()
	a.m.lastPass.Set(float64(c.Completed.Unix()))
	a.log.InfoContext(ctx, "fixity: pass complete", "started", c.Started, "took", c.Completed.Sub(c.Started).Round(time.Second), "bad", c.Bad)
	return saveCursor(ctx, a.deps.Catalog, c)
}

// advance moves the cursor past the resource just checked.
func (a *Audit) advance(collection, uri string) cursor {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cur.Collection, a.cur.URI = collection, uri
	return a.cur
}

func (a *Audit) setCursor(c cursor) {
	a.mu.Lock()
	a.cur = c
	a.mu.Unlock()
}
