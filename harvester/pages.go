package harvester

import (
	"context"
	"fmt"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// baselinePages reads one Resource List and every page it leads to by
// rs:ln rel="next" (AtoM pages its Resource List as ?page=N, each page
// linking the next), as parts of one list. A page already read ends the
// walk (a loop), as does Config.MaxPages pages; both are logged and
// counted, and the baseline then infers no deletions, since the pages not
// read may list resources the Source still has. d is closed.
func (p *pass) baselinePages(ctx context.Context, d *document, b *baselineRun) error {
	first := d.uri
	seen := map[string]bool{}
	for n := 1; ; n++ {
		seen[d.uri] = true
		err := p.baselineList(ctx, d, b)
		next := ""
		if l := d.r.Header().Link("next"); l != nil && l.Href != "" {
			next = resolve(d.uri, l.Href)
		}
		d.Close()
		if err != nil || next == "" {
			if n > 1 {
				p.tolerate(first, tolPaged, n)
			}
			return err
		}
		switch {
		case seen[next]:
			p.badEntries++ // what the loop hides may exist: no deletions
			p.refuse(first, kindDocument, "loop|"+next, func() string {
				return fmt.Sprintf("page %d links back to %s with rel=\"next\"; pages stop there", n, next)
			})
			return nil
		case n >= p.h.cfg.MaxPages:
			p.badEntries++
			p.refuse(first, kindDocument, "pages|"+first, func() string {
				return fmt.Sprintf("more than %d pages linked by rel=\"next\" (max_pages); the rest not read", p.h.cfg.MaxPages)
			})
			return nil
		}
		if d, err = p.open(ctx, next, validators{}); err != nil {
			return err
		}
		if k := d.r.Header().Kind(); k != resourcesync.KindResourceList && k != resourcesync.KindSitemap {
			d.Close()
			p.h.m.errors.WithLabelValues(p.src.Name, kindDocument).Inc()
			return fmt.Errorf("source %s: %s, page %d of Resource List %s, is a %s", p.src.Name, next, n+1, first, k)
		}
		b.noteAt(d.r.Header().MD.At)
	}
}
