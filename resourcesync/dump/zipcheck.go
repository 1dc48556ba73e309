package dump

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
	"io/fs"
	"sort"
	"sync/atomic"
)

// budgetReaderAt fails reads once more than left bytes have been read. It
// bounds what zip.NewReader reads, and so keeps in memory, while it
// parses the central directory; afterwards the budget is lifted.
type budgetReaderAt struct {
	r    io.ReaderAt
	left atomic.Int64 // < 0: no budget
}

func (b *budgetReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if left := b.left.Load(); left >= 0 {
		if int64(len(p)) > left {
			return 0, errDirectoryBudget
		}
		b.left.Add(-int64(len(p)))
	}
	return b.r.ReadAt(p, off)
}

var errDirectoryBudget = &budgetError{}

type budgetError struct{}

func (*budgetError) Error() string { return "central directory over MaxDirectoryBytes" }

// declaredRecords reads the entry count from the end of central directory
// record (and its ZIP64 form), before zip.NewReader trusts it to size an
// allocation. It returns -1 when it cannot tell; archive/zip then reports
// the damage.
func declaredRecords(r io.ReaderAt, size int64) int64 {
	const eocdLen, maxComment = 22, 65535
	tail := int64(eocdLen + maxComment)
	if tail > size {
		tail = size
	}
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil {
		return -1
	}
	i := bytes.LastIndex(buf, []byte("PK\x05\x06"))
	if i < 0 || len(buf)-i < eocdLen {
		return -1
	}
	n := int64(binary.LittleEndian.Uint16(buf[i+10:]))
	if n != 0xffff || i < 20 || !bytes.HasPrefix(buf[i-20:], []byte("PK\x06\x07")) {
		return n
	}
	off := int64(binary.LittleEndian.Uint64(buf[i-20+8:]))
	rec := make([]byte, 56)
	if off < 0 || off > size-56 {
		return -1
	}
	if _, err := r.ReadAt(rec, off); err != nil || !bytes.HasPrefix(rec, []byte("PK\x06\x06")) {
		return -1
	}
	v := binary.LittleEndian.Uint64(rec[32:])
	if v > 1<<62 {
		return 1 << 62
	}
	return int64(v)
}

// checkFile refuses a ZIP entry that is not a plain file or directory
// stored or deflated in the clear, with a safe name.
func (p *Package) checkFile(f *zip.File) error {
	if why := unsafeName(f.Name); why != "" {
		return refuse(p.name, quote(f.Name), ErrUnsafe, nil, "%s", why)
	}
	max, limit := p.lim.MaxEntryBytes, "MaxEntryBytes"
	if f.Name == ManifestName {
		max, limit = p.lim.MaxManifestBytes, "MaxManifestBytes"
	}
	mode := f.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		return refuse(p.name, quote(f.Name), ErrUnsafe, nil, "symbolic link")
	case mode&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket|fs.ModeIrregular) != 0:
		return refuse(p.name, quote(f.Name), ErrUnsafe, nil, "not a regular file (mode %v)", mode)
	case f.Flags&0x1 != 0:
		return refuse(p.name, quote(f.Name), ErrUnsupported, nil, "encrypted entry")
	case f.Method != zip.Store && f.Method != zip.Deflate:
		return refuse(p.name, quote(f.Name), ErrUnsupported, nil, "compression method %d (only store and deflate are read)", f.Method)
	case isDir(f) && (f.UncompressedSize64 > 0 || f.CompressedSize64 > 2):
		return refuse(p.name, quote(f.Name), ErrCorrupt, nil, "directory entry with data")
	case f.Method == zip.Store && f.CompressedSize64 != f.UncompressedSize64:
		return refuse(p.name, quote(f.Name), ErrCorrupt, nil, "stored entry whose sizes differ (%d, %d)", f.CompressedSize64, f.UncompressedSize64)
	case f.UncompressedSize64 > uint64(max):
		return refuse(p.name, quote(f.Name), ErrLimit, nil, "declares %d bytes, over %s (%d)", f.UncompressedSize64, limit, max)
	}
	return nil
}

func isDir(f *zip.File) bool {
	return len(f.Name) > 0 && f.Name[len(f.Name)-1] == '/' || f.Mode().IsDir()
}

// checkLayout refuses entries whose data lies outside the file or
// overlaps another entry's: overlapping entries let a small archive
// expand into many copies of the same compressed data.
func (p *Package) checkLayout(size int64) error {
	type span struct {
		start, end int64
		name       string
	}
	spans := make([]span, 0, len(p.zr.File))
	for _, f := range p.zr.File {
		off, err := f.DataOffset()
		if err != nil {
			return refuse(p.name, quote(f.Name), ErrCorrupt, err, "reading the local header")
		}
		end := off + int64(f.CompressedSize64)
		if f.CompressedSize64 > uint64(size) || end > size || off < 0 {
			return refuse(p.name, quote(f.Name), ErrCorrupt, nil, "data runs past the end of the file (truncated?)")
		}
		spans = append(spans, span{off, end, f.Name})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			return refuse(p.name, quote(spans[i].name), ErrLimit, nil, "data overlaps entry %q (a ZIP bomb)", spans[i-1].name)
		}
	}
	return nil
}
