package catalog

// schemaV14 marks the catalogs whose packs may hold links in the packed
// form of links.go rather than as JSON: a build before it would read them
// as malformed, so it is refused such a file (ErrSchemaNewer) instead.
//
// Measured on a repository's baseline (BenchmarkCatalogSize: a
// describedby link on every resource, a via link on one in ten), the JSON
// of the links was 150 of a resource row's 550 bytes and as much of its
// change's, and decoding it cost a list a JSON decoder a row. No row is
// rewritten: those written before keep JSON, which the reads still take,
// and a resource's next change writes it packed.
const schemaV14 = `
-- Nothing in SQL: the packs' links change form (links.go).
SELECT 1;
`
