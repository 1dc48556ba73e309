package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// HeldCopy is what the fixity audit reads of a held resource: where its
// copy is (the blob key, its sha-256), what its bytes must be, and the
// key that places the resource in the audit's walk.
type HeldCopy struct {
	Collection, URI, Source string
	SHA256, MD5             string
	Length                  int64
}

// HeldCopies returns at most limit held resources (deleted ones and
// tombstones excluded) whose (collection, URI) sorts after
// (afterCollection, afterURI), in that order: a page of the fixity
// audit's walk, by primary key, so that a walk resumed from the last key
// of a page reads no row twice and costs no index of its own.
func (c *Catalog) HeldCopies(ctx context.Context, afterCollection, afterURI string, limit int) ([]HeldCopy, error) {
	page, err := readPage(ctx, c.reader, `SELECT collection, uri, source, sha256, md5, length FROM resources
		WHERE (collection, uri) > (?, ?) AND deleted = 0 AND sha256 != ''
		ORDER BY collection, uri LIMIT ?`, []any{afterCollection, afterURI, limit},
		func(s scanner) (HeldCopy, error) {
			var h HeldCopy
			err := s.Scan(&h.Collection, &h.URI, &h.Source, hexDigest{&h.SHA256}, hexDigest{&h.MD5}, &h.Length)
			return h, err
		})
	if err != nil {
		return nil, fmt.Errorf("list held copies after %s %q: %w", afterCollection, afterURI, err)
	}
	return page, nil
}

// CopiesOf returns every held resource of the given Sources, and of
// the Sources the catalog records, whose copy is the blob sha256 (with
// that md5), a Source's after another's: the resources a bad blob must
// be fetched again for. It goes by the md5 index (changes_md5), since
// the catalog keeps no index by sha-256 (schemaV6); a copy's md5 is
// computed with its sha-256, so it is never missing from a row.
func (c *Catalog) CopiesOf(ctx context.Context, sources []string, sha256, md5 string) ([]*Resource, error) {
	known, err := c.Sources(ctx)
	if err != nil {
		return nil, fmt.Errorf("find the resources whose copy is blob %s: %w", sha256, err)
	}
	names := make(map[string]bool, len(sources)+len(known))
	for _, s := range sources {
		names[s] = true
	}
	for _, s := range known {
		names[s.Name] = true
	}
	prefix, value := md5Args(md5)
	page, err := readPage(ctx, c.reader, `SELECT `+qualified(resourceCols)+byMD5From+` AND r.sha256 = ?3`,
		[]any{prefix, value, digestValue(sha256)}, scanResource)
	if err != nil {
		return nil, fmt.Errorf("find the resources whose copy is blob %s: %w", sha256, err)
	}
	copies := slices.DeleteFunc(page, func(r *Resource) bool { return !names[r.Source] })
	slices.SortStableFunc(copies, func(a, b *Resource) int { return strings.Compare(a.Source, b.Source) })
	return copies, nil
}
