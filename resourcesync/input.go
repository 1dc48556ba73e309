package resourcesync

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
)

// cappedReader passes at most max bytes through and fails, naming its limit,
// when the input has more. A plain io.LimitReader would end the input
// silently and turn an oversized document into a truncated one.
type cappedReader struct {
	r     io.Reader
	left  int64
	max   int64
	limit string
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			return 0, &limitError{limit: c.limit, max: c.max}
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// openInput wraps the document in the size caps and, when it starts with
// the gzip magic bytes, in a gunzipping reader with its own cap on the
// decompressed size, so that a gzip bomb stops at MaxDecompressed.
func openInput(r io.Reader, lim Limits) (*bufio.Reader, error) {
	raw := bufio.NewReaderSize(&cappedReader{r: r, left: lim.MaxBytes, max: lim.MaxBytes, limit: "MaxBytes"}, 64<<10)
	magic, err := raw.Peek(2)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return raw, nil
	}
	zr, err := gzip.NewReader(raw)
	if err != nil {
		return nil, fmt.Errorf("opening gzip stream: %w", err)
	}
	return bufio.NewReaderSize(&cappedReader{r: zr, left: lim.MaxDecompressed, max: lim.MaxDecompressed, limit: "MaxDecompressed"}, 64<<10), nil
}
