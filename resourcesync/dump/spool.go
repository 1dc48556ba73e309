package dump

import (
	"context"
	"fmt"
	"io"
	"os"
)

// Spool copies r, a package as downloaded, to a new temporary file in dir
// and returns its path, for Open. It stops at maxBytes (an ErrLimit error)
// and when ctx ends; on any error the file is removed. The caller removes
// the file when done with the package.
func Spool(ctx context.Context, r io.Reader, dir string, maxBytes int64) (path string, err error) {
	f, err := os.CreateTemp(dir, "dump-*.zip")
	if err != nil {
		return "", fmt.Errorf("spooling a dump package: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("spooling a dump package to %s: %w", f.Name(), cerr)
		}
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	n, err := io.Copy(f, io.LimitReader(ctxReader{ctx, r}, maxBytes+1))
	if err != nil {
		return "", fmt.Errorf("spooling a dump package to %s: %w", f.Name(), err)
	}
	if n > maxBytes {
		return "", fmt.Errorf("spooling a dump package: more than %d bytes: %w", maxBytes, ErrLimit)
	}
	return f.Name(), nil
}

// ctxReader stops reading when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
