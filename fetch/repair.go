package fetch

import "github.com/viaduct-mirror/viaduct"

// restores reports whether st, fetched for a repair (viaduct.Change.Repair),
// holds the very bytes of the copy being repaired: committing them puts
// the copy back under its key, and the catalog, which names that key
// already, needs no event. A repair whose Source now serves other bytes
// goes on as any fetched change: its event records the copy it read.
func restores(c *viaduct.Change, st *staged) bool {
	return c.Repair != "" && st.w != nil && st.ev.SHA256 == c.Repair
}
