package fetch

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
)

// restores reports whether st, fetched for a repair (viaduct.Change.Repair),
// holds the very bytes of the copy being repaired: committing them puts
// the copy back under its key, and the catalog, which names that key
// already, needs no event. A repair whose Source now serves other bytes
// goes on as any fetched change: its event records the copy it read.
func restores(c *viaduct.Change, st *staged) bool {
	return c.Repair != "" && st.w != nil && st.ev.SHA256 == c.Repair
}

// repaired commits a repair's copy and acknowledges the change without
// an event. It returns errAbandoned only when the test hook stands for a
// crash after the commit.
func (p *Pool) repaired(ctx context.Context, msg *queue.ChangeMsg, st *staged, span trace.Span, log *slog.Logger) error {
	if ok, abandoned := p.committed(ctx, msg, st, span, log); abandoned {
		return errAbandoned
	} else if !ok {
		return nil
	}
	span.SetAttributes(attribute.String("viaduct.repaired", st.ev.SHA256))
	log.Info("copy repaired from the Source", "sha256", st.ev.SHA256, "length", st.ev.Length)
	p.acked(ctx, msg, nil, "", span, log)
	return nil
}
