package dump

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"context"
	"fmt"
	"hash"
	"hash/crc32"
	"io"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Body is the bytes of one ZIP entry, checked as they stream: sizes and
// compression ratio against Limits on every Read, and at the end the ZIP's
// CRC-32 and size and the manifest's length and hashes. Read returns
// io.EOF only for a bitstream that passed every check; anything wrong is
// an *Error in its place. So a caller that copies a Body until io.EOF (as
// io.Copy does) and commits only when the copy returned no error never
// commits a wrong bitstream.
type Body struct {
	ctx  context.Context
	p    *Package
	f    *zip.File
	md   *resourcesync.MD // declared by the manifest; nil for manifest.xml
	loc  string           // the manifest entry's loc, for errors
	max  int64
	raw  counter
	rd   io.Reader
	crc  hash.Hash32
	h    *resourcesync.Hasher
	n    int64
	sums resourcesync.Hashes
	done bool
	err  error
}

var _ io.Reader = (*Body)(nil)

// counter counts the compressed bytes read, for the ratio limits.
type counter struct {
	r io.Reader
	n int64
	p *Package
}

func (c *counter) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	c.p.comp += int64(n)
	return n, err
}

// body opens entry f for reading, checked against md (nil: no manifest
// metadata, for manifest.xml itself) and capped at max bytes. loc is the
// manifest entry's loc, named in refusals.
func (p *Package) body(ctx context.Context, f *zip.File, md *resourcesync.MD, loc string, max int64) (*Body, error) {
	b := &Body{ctx: ctx, p: p, f: f, md: md, loc: loc, max: max}
	raw, err := f.OpenRaw()
	if err != nil {
		return nil, refuse(p.name, b.entry(), ErrCorrupt, err, "opening")
	}
	b.crc = crc32.NewIEEE()
	b.raw = counter{r: raw, p: p}
	b.rd = &b.raw
	switch {
	case f.Method == zip.Deflate && md == nil:
		// The manifest is read alongside the bitstreams, so it cannot
		// share their reused readers.
		b.rd = flate.NewReader(bufio.NewReaderSize(&b.raw, 4<<10))
	case f.Method == zip.Deflate:
		if p.br == nil {
			p.br = bufio.NewReaderSize(&b.raw, 4<<10)
		} else {
			p.br.Reset(&b.raw)
		}
		b.rd = p.inflate(p.br)
	}
	if md != nil {
		b.h = resourcesync.NewHasher()
	}
	return b, nil
}

// entry names the ZIP entry, and the manifest entry's loc, in a refusal;
// built only when one is made.
func (b *Body) entry() string {
	if b.md == nil {
		return ManifestName
	}
	return fmt.Sprintf("%s (%s)", quote(b.f.Name), b.loc)
}

// Read reads the bitstream; see Body for what its errors mean.
func (b *Body) Read(buf []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.done {
		return 0, io.EOF
	}
	if err := b.ctx.Err(); err != nil {
		b.err = err
		return 0, err
	}
	n, err := b.rd.Read(buf)
	if n > 0 {
		b.n += int64(n)
		b.p.unz += int64(n)
		if e := b.overLimit(); e != nil {
			b.err = e
			return 0, e
		}
		b.crc.Write(buf[:n])
		if b.h != nil {
			b.h.Write(buf[:n])
		}
	}
	switch {
	case err == io.EOF:
		if e := b.finish(); e != nil {
			b.err = e
			return n, e
		}
		b.done = true
		return n, io.EOF
	case err != nil:
		b.err = refuse(b.p.name, b.entry(), ErrCorrupt, err, "reading after %d bytes", b.n)
		return n, b.err
	}
	return n, nil
}

// overLimit checks what has been read so far, before the bytes are
// handed on.
func (b *Body) overLimit() error {
	p, lim := b.p, &b.p.lim
	switch {
	case b.n > b.max:
		return refuse(p.name, b.entry(), ErrLimit, nil, "more than %d bytes", b.max)
	case uint64(b.n) > b.f.UncompressedSize64:
		return refuse(p.name, b.entry(), ErrCorrupt, nil, "more bytes than the %d its ZIP header says", b.f.UncompressedSize64)
	case b.md != nil && b.md.Length != nil && b.n > *b.md.Length:
		return refuse(p.name, b.entry(), ErrMismatch, nil, "more bytes than the %d the manifest says", *b.md.Length)
	case p.unz > lim.MaxTotalBytes:
		return refuse(p.name, b.entry(), ErrLimit, nil, "package yields more than MaxTotalBytes (%d)", lim.MaxTotalBytes)
	case b.n > lim.RatioFloor && b.n > lim.MaxRatio*b.raw.n:
		return refuse(p.name, b.entry(), ErrLimit, nil, "compression ratio over %d:1 (%d bytes from %d; a ZIP bomb)", lim.MaxRatio, b.n, b.raw.n)
	case p.unz > lim.RatioFloor && p.unz > lim.MaxRatio*p.comp:
		return refuse(p.name, b.entry(), ErrLimit, nil, "package compression ratio over %d:1 (a ZIP bomb)", lim.MaxRatio)
	}
	return nil
}

// finish checks a bitstream read to its end.
func (b *Body) finish() error {
	p := b.p
	if uint64(b.n) != b.f.UncompressedSize64 {
		return refuse(p.name, b.entry(), ErrCorrupt, nil, "%d bytes, its ZIP header says %d (truncated?)", b.n, b.f.UncompressedSize64)
	}
	if b.crc.Sum32() != b.f.CRC32 {
		return refuse(p.name, b.entry(), ErrCorrupt, nil, "CRC-32 %08x, its ZIP header says %08x", b.crc.Sum32(), b.f.CRC32)
	}
	if b.md == nil {
		return nil
	}
	if b.md.Length != nil && *b.md.Length != b.n {
		return refuse(p.name, b.entry(), ErrMismatch, nil, "%d bytes, the manifest says %d", b.n, *b.md.Length)
	}
	b.sums = b.h.Sum()
	if len(b.md.Hash) > 0 {
		if err := b.md.Hash.Verify(b.sums); err != nil {
			return refuse(p.name, b.entry(), ErrMismatch, err, "hash differs from the manifest's")
		}
	}
	return nil
}

// Verify reads what is left of the bitstream and reports whether it is
// the one the manifest describes, with its md5, sha-1 and sha-256. Commit
// the bytes only after Verify returned no error.
func (b *Body) Verify() (resourcesync.Hashes, error) {
	if !b.done && b.err == nil {
		io.Copy(io.Discard, b)
	}
	if b.err != nil {
		return nil, b.err
	}
	return b.sums, nil
}

// Len is the number of bytes read so far.
func (b *Body) Len() int64 { return b.n }
