package harvester

import (
	"context"
	"errors"
	"fmt"
)

// ErrElsewhere is what Leases.Hold returns when another node harvests the
// Source: the pass is skipped here, which is not a failure.
var ErrElsewhere = errors.New("another node harvests this source")

// hold asks Leases whether this node runs the pass over s. A nil done
// with a nil error means the pass is skipped.
func (h *Harvester) hold(ctx context.Context, s *source) (context.Context, func(), error) {
	if h.deps.Leases == nil {
		return ctx, func() {}, nil
	}
	pctx, done, err := h.deps.Leases.Hold(ctx, s.Name)
	if errors.Is(err, ErrElsewhere) {
		h.log.Debug("pass skipped: another node holds the source's lease", "source", s.Name)
		h.m.passes.WithLabelValues(s.Name, "elsewhere").Inc()
		return ctx, nil, nil
	}
	if err != nil {
		h.m.errors.WithLabelValues(s.Name, kindCatalog).Inc()
		return ctx, nil, fmt.Errorf("source %s: take its lease: %w", s.Name, err)
	}
	return pctx, done, nil
}
