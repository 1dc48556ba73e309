package harvester

// findings keeps what a pass found for the status page: the tolerances of
// the pass (replacing the last pass's, so the page shows how the Source
// is read now) and its gaps (added to the last ones, since a gap closed
// is worth seeing after the next quiet pass too).
func (c *control) findings(name string, warnings []Warning, gaps []Gap) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.track(name)
	t.warnings = warnings
	t.gaps = append(t.gaps, gaps...)
	if len(t.gaps) > recentPasses {
		t.gaps = t.gaps[len(t.gaps)-recentPasses:]
	}
}
