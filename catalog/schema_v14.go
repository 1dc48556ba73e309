package catalog

// schemaV14 marks the catalogs whose packs may hold the forms of links.go
// and codes.go: the Source's links packed rather than as JSON, each href
// kept against the row's URI, and ops and common media types as codes of
// a byte. A build before it would read such packs as malformed, so it is
// refused the file (ErrSchemaNewer) instead.
//
// Measured on a repository's baseline (BenchmarkCatalogSize: a
// describedby link on every resource, a via link on one in ten), the JSON
// of the links was 150 of a resource row's 550 bytes and as much of its
// change's, and the ops and types written out 60 bytes a resource more;
// decoding the JSON cost a list a JSON decoder a row. No row is
// rewritten: those written before keep their JSON and strings, which the
// reads still take, and a resource's next change writes it anew.
const schemaV14 = `
-- Nothing in SQL: the packs' forms change (links.go, codes.go).
SELECT 1;
`
