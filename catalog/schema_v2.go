package catalog

// schemaV2 keeps, on each row of the change log, what the Source said of
// that change (its op, times, hashes, length, type and links), so that a
// Change List entry's via link carries the origin's facts as they were at
// that change rather than the resource's latest. Rows logged before this
// step are filled from their resource's current upstream metadata, the
// closest record there is of them; their upstream op is taken to be the
// aggregator's.
const schemaV2 = `
ALTER TABLE changes ADD COLUMN source      TEXT NOT NULL DEFAULT '';
ALTER TABLE changes ADD COLUMN up_op       TEXT NOT NULL DEFAULT '';
ALTER TABLE changes ADD COLUMN up_time     TEXT NOT NULL DEFAULT '';
ALTER TABLE changes ADD COLUMN up_modified TEXT NOT NULL DEFAULT '';
ALTER TABLE changes ADD COLUMN up_hash     TEXT NOT NULL DEFAULT '';
ALTER TABLE changes ADD COLUMN up_length   INTEGER;
ALTER TABLE changes ADD COLUMN up_type     TEXT NOT NULL DEFAULT '';
ALTER TABLE changes ADD COLUMN links       TEXT;

UPDATE changes SET up_op = op,
	(source, up_time, up_modified, up_hash, up_length, up_type, links) =
	(SELECT r.source, r.up_time, r.up_modified, r.up_hash, r.up_length, r.up_type, r.links
		FROM resources r WHERE r.collection = changes.collection AND r.uri = changes.uri)
	WHERE EXISTS (SELECT 1 FROM resources r WHERE r.collection = changes.collection AND r.uri = changes.uri);
`
