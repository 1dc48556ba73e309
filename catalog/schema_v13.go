package catalog

// schemaV13 keeps each change's size bounds (SizeHint) on its change-log
// row, as the resources keep theirs.
//
// A period of the change log with more changes than one Change List may
// hold is cut into pieces by the sizes of its entries (republish's
// changesplit.go). Without the bounds on the rows, the first read of the
// Change List Index after a node starts walked the whole open period,
// decoding every change to bound it: 1.9 of the 5.5 CPU-seconds of
// reading a 1,000,000-change baseline's Change Lists, before the index's
// first byte. With them the walk reads two integers a row.
//
// The rows logged before this step keep NULL, and the walk decodes those
// as before (ScanChangeSizes): the log loses them to retention in time,
// and no step has to read every change of a large log to fill them.
const schemaV13 = `
ALTER TABLE changes ADD COLUMN est INTEGER;
ALTER TABLE changes ADD COLUMN est_refs INTEGER;
`
