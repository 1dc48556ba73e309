package catalog

// schemaV4 adds up_order, the Source time that places a resource's last
// applied statement (see order.go): the later of its upstream change time
// and, for a baseline, the at of the list that stated it, in the text form
// of up_time. An event older than it no longer changes the row. Rows
// written before this step take their upstream time.
//
// From this step on a row may also be a tombstone: a deletion of a
// resource the aggregator never held, kept (deleted = 1, seq = 0, no copy)
// only so that an older creation arriving later is known to be stale. A
// tombstone is in no list, count or change log; see heldOnce.
const schemaV4 = `
ALTER TABLE resources ADD COLUMN up_order TEXT NOT NULL DEFAULT '';
UPDATE resources SET up_order = up_time;
`

// heldOnce is the condition of rows the aggregator held a copy of at
// some point, tombstones excluded: every change it made has a sequence,
// and stream sequences start at 1.
const heldOnce = `seq > 0`
