package fixity

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/storage"
)

// readChunk is how many bytes of a blob the audit reads at a time.
const readChunk = 64 << 10

// check reads the copy of h back, at the audit's pace, and hashes it. A
// copy whose bytes do not hash to its key is quarantined and repaired, a
// missing one repaired; a store that fails to answer is logged and
// counted, and the copy checked again next pass. It returns an error only
// when the audit must stop (its context ended, or a quarantine or a
// repair could not be asked: the cursor stays before the copy).
func (a *Audit) check(ctx context.Context, h *catalog.HeldCopy) error {
	ok, err := a.hashes(ctx, h.SHA256)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, storage.ErrNotFound):
		if a.repairing(h.SHA256) {
			return nil // quarantined by this audit, its repair not back yet
		}
		a.m.checked.WithLabelValues(resultMissing).Inc()
		a.log.WarnContext(ctx, "fixity: the catalog holds a copy the blob store does not have; fetching it again",
			"collection", h.Collection, "uri", h.URI, "sha256", h.SHA256)
		return a.repair(ctx, h, "missing")
	case err != nil:
		a.m.checked.WithLabelValues(resultUnreadable).Inc()
		a.log.WarnContext(ctx, "fixity: blob unreadable; checked again next pass", "sha256", h.SHA256, "uri", h.URI, "err", err)
		return nil
	case !ok:
		a.m.checked.WithLabelValues(resultBad).Inc()
		where, err := a.deps.Quarantine.Quarantine(ctx, h.SHA256)
		if err != nil {
			return err
		}
		a.log.ErrorContext(ctx, "fixity: blob's bytes do not hash to its key; quarantined, fetching it again",
			"collection", h.Collection, "uri", h.URI, "sha256", h.SHA256, "quarantined_at", where)
		return a.repair(ctx, h, "bad")
	}
	a.m.checked.WithLabelValues(resultOK).Inc()
	return nil
}

// hashes reads the blob key and reports whether its bytes hash to key.
func (a *Audit) hashes(ctx context.Context, key string) (bool, error) {
	if err := a.open.wait(ctx, 1); err != nil {
		return false, err
	}
	b, err := a.deps.Blobs.Open(ctx, key)
	if err != nil {
		return false, err
	}
	defer b.Close()
	d := sha256.New()
	if a.buf == nil {
		a.buf = make([]byte, readChunk)
	}
	for {
		n, err := io.ReadFull(b, a.buf)
		d.Write(a.buf[:n])
		a.m.bytes.Add(float64(n))
		// The bytes just read are paid for after the fact: the budget
		// counts what was read, whatever the size of the blob.
		if perr := a.pace.wait(ctx, n); perr != nil {
			return false, perr
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return false, err
		}
	}
	return hex.EncodeToString(d.Sum(nil)) == key, nil
}
