package fetch

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// writeCounter counts the writes a copy makes.
type writeCounter struct {
	bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) { w.writes++; return w.Buffer.Write(p) }

// A body that arrives a few bytes at a time is written in whole buffers,
// every byte once, in order.
func TestFullReadsWritesWholeBuffers(t *testing.T) {
	data := make([]byte, 200_000)
	for i := range data {
		data[i] = byte(i * 31)
	}
	if err := iotest.TestReader(fullReads{iotest.HalfReader(bytes.NewReader(data))}, data); err != nil {
		t.Fatal(err)
	}
	var w writeCounter
	buf := make([]byte, 64<<10)
	n, err := io.CopyBuffer(writerOnly{&w}, fullReads{iotest.OneByteReader(bytes.NewReader(data))}, buf)
	if err != nil || n != int64(len(data)) || !bytes.Equal(w.Bytes(), data) {
		t.Fatalf("copied %d bytes (%v), equal %v; want %d", n, err, bytes.Equal(w.Bytes(), data), len(data))
	}
	if want := (len(data) + len(buf) - 1) / len(buf); w.writes != want {
		t.Errorf("%d writes, want %d", w.writes, want)
	}
}

// An error of the body after some bytes hands the bytes over, then the
// error: the copy stores what arrived and reports what broke it. A body
// cut short reports io.ErrUnexpectedEOF, which must stay an error (a
// reader built on io.ReadFull would take it for a short last read).
func TestFullReadsKeepsTheBodysError(t *testing.T) {
	for _, broken := range []error{errors.New("connection reset"), io.ErrUnexpectedEOF} {
		r := io.MultiReader(bytes.NewReader([]byte("partial")), iotest.ErrReader(broken))
		var w bytes.Buffer
		n, err := io.CopyBuffer(writerOnly{&w}, fullReads{r}, make([]byte, 1024))
		if !errors.Is(err, broken) || n != 7 || w.String() != "partial" {
			t.Errorf("copied %d bytes %q, error %v; want 7 bytes and %v", n, w.String(), err, broken)
		}
	}
}
