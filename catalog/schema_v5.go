package catalog

// schemaV5 serves snapshots and retention.
//
// changes.prev is the sequence of the resource's change before this one
// (0 for its first): the first change of a resource after a sequence S
// names, by primary key, the change that held at S, so a Resource List
// Index can list the catalog as it was at S however much changed since
// (see ScanResourcesAt). The fill computes it for the rows already there.
//
// A tombstone's changed column (0 until now) becomes the time it was
// written, so that retention can age it; tombstones already there are
// dated now. collections.horizon and horizon_seq record how far
// retention has pruned the collection's change log (see Prune): nothing
// before horizon is served, and no snapshot older than horizon_seq can be
// rebuilt.
const schemaV5 = `
ALTER TABLE changes ADD COLUMN prev INTEGER NOT NULL DEFAULT 0;
UPDATE changes SET prev = p.before FROM (
	SELECT seq AS at_seq, coalesce(lag(seq) OVER (PARTITION BY collection, uri ORDER BY seq), 0) AS before FROM changes
) AS p WHERE p.at_seq = changes.seq;
UPDATE resources SET changed = CAST(unixepoch('subsec') * 1000000 AS INTEGER) WHERE seq = 0 AND deleted = 1;
ALTER TABLE collections ADD COLUMN horizon INTEGER;
ALTER TABLE collections ADD COLUMN horizon_seq INTEGER NOT NULL DEFAULT 0;
`
