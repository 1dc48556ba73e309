package catalog

import (
	"context"
	"fmt"
	"math"
	"time"
)

// ChangeRecord is one entry of the aggregator's change log.
type ChangeRecord struct {
	// Seq is the EVENTS sequence of the change.
	Seq        uint64
	Collection string
	URI        string
	// Op is created, updated or deleted, from the aggregator's view.
	Op string
	// At is the change's time: strictly increasing per collection, so
	// unique per (URI, datetime). Received is the stream timestamp it was
	// adjusted from.
	At       time.Time
	Received time.Time
	SHA256   string
	MD5      string
	Length   int64
	Type     string
}

const changeCols = `seq, collection, uri, op, at, received, sha256, md5, length, type`

// scanChange reads one row of changeCols.
func scanChange(s scanner) (*ChangeRecord, error) {
	var (
		ch           ChangeRecord
		seq, at, rcv int64
	)
	err := s.Scan(&seq, &ch.Collection, &ch.URI, &ch.Op, &at, &rcv, hexDigest{&ch.SHA256}, hexDigest{&ch.MD5}, &ch.Length, &ch.Type)
	if err != nil {
		return nil, err
	}
	ch.Seq, ch.At, ch.Received = uint64(seq), time.UnixMicro(at).UTC(), time.UnixMicro(rcv).UTC()
	return &ch, nil
}

// Changes calls fn, in sequence order, for the changes of collection with
// fromSeq <= seq <= toSeq (toSeq 0: no upper bound). Rows are read by
// keyset pages; an error from fn stops the walk and is returned.
func (c *Catalog) Changes(ctx context.Context, collection string, fromSeq, toSeq uint64, fn func(*ChangeRecord) error) error {
	if toSeq == 0 || toSeq > math.MaxInt64 {
		toSeq = math.MaxInt64
	}
	if fromSeq > toSeq {
		return nil
	}
	next := int64(fromSeq)
	for {
		page, err := readPage(ctx, c.reader, `SELECT `+changeCols+` FROM changes
			WHERE collection = ? AND seq >= ? AND seq <= ? ORDER BY seq LIMIT ?`,
			[]any{collection, next, int64(toSeq), pageSize}, scanChange)
		if err != nil {
			return fmt.Errorf("list changes of collection %s from seq %d: %w", collection, next, err)
		}
		for _, ch := range page {
			if err := fn(ch); err != nil {
				return err
			}
		}
		if len(page) < pageSize {
			return nil
		}
		next = int64(page[len(page)-1].Seq) + 1
	}
}

// ChangesBetween calls fn, in time order (which is sequence order), for
// the changes of collection with from < At <= until: the interval of one
// Change List or notification, so that consecutive intervals neither
// overlap nor leave a gap. A zero until means no upper bound.
func (c *Catalog) ChangesBetween(ctx context.Context, collection string, from, until time.Time, fn func(*ChangeRecord) error) error {
	after := int64(math.MinInt64)
	if !from.IsZero() {
		after = from.UnixMicro()
	}
	end := int64(math.MaxInt64)
	if !until.IsZero() {
		end = until.UnixMicro()
	}
	for {
		page, err := readPage(ctx, c.reader, `SELECT `+changeCols+` FROM changes
			WHERE collection = ? AND at > ? AND at <= ? ORDER BY at LIMIT ?`,
			[]any{collection, after, end, pageSize}, scanChange)
		if err != nil {
			return fmt.Errorf("list changes of collection %s after %s: %w", collection, time.UnixMicro(after).UTC(), err)
		}
		for _, ch := range page {
			if err := fn(ch); err != nil {
				return err
			}
		}
		if len(page) < pageSize {
			return nil
		}
		after = page[len(page)-1].At.UnixMicro()
	}
}
