package resourcesync

import (
	"bytes"
	"compress/gzip"
	"io"
	"runtime"
	"strings"
	"testing"
)

// heapWatch is a reader over a hostile input that records the greatest
// heap in use, sampled every few MB of input, above the heap in use when
// it was made (after a collection). The reader allocates nothing per
// token, so what is in use while reading is what it keeps.
type heapWatch struct {
	r      io.Reader
	n      int64 // bytes served
	next   int64 // when to sample
	base   uint64
	peak   uint64
	sample int64
}

func newHeapWatch(r io.Reader) *heapWatch {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return &heapWatch{r: r, base: m.HeapAlloc, sample: 4 << 20, next: 4 << 20}
}

func (h *heapWatch) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.n += int64(n)
	if h.n >= h.next {
		h.next += h.sample
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapAlloc > h.base {
			h.peak = max(h.peak, m.HeapAlloc-h.base)
		}
	}
	return n, err
}

// growth is the greatest heap growth seen.
func (h *heapWatch) growth() uint64 { return h.peak }

// spaces is an endless run of white space.
type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// maxHostileHeap is the heap a refused hostile document may cost: a few
// window-sized buffers, far below the document limits (64 MiB read,
// 256 MiB decompressed).
const maxHostileHeap = 8 << 20

// TestEndlessWhitespace: a document that never ends, white space after its
// root tag, is refused at MaxBytes, having cost no more than a few MB.
func TestEndlessWhitespace(t *testing.T) {
	h := newHeapWatch(io.MultiReader(strings.NewReader(docHead), spaces{}))
	err := readErr2(h, Limits{})
	wantLimit(t, err, "MaxBytes", true)
	if h.n < 64<<20 {
		t.Errorf("refused after %d bytes, before the 64 MiB limit", h.n)
	}
	if g := h.growth(); g > maxHostileHeap {
		t.Errorf("heap grew by %d bytes while reading, want at most %d", g, maxHostileHeap)
	}
	t.Logf("read %d bytes, heap growth %d bytes", h.n, h.growth())
}

// TestGzipBombGiB: 1 MB of gzip that expands to 1 GiB of white space is
// refused at MaxDecompressed, having read a quarter of the compressed
// bytes and cost no more than a few MB.
func TestGzipBombGiB(t *testing.T) {
	bomb := gzipBomb(t, 1024)
	if len(bomb) > 2<<20 {
		t.Fatalf("the bomb is %d bytes, want about 1 MB", len(bomb))
	}
	h := newHeapWatch(bytes.NewReader(bomb))
	h.sample, h.next = 64<<10, 64<<10 // compressed bytes: sample every 64 MiB or so of output
	err := readErr2(h, Limits{})
	wantLimit(t, err, "MaxDecompressed", true)
	if h.n > int64(len(bomb))/2 {
		t.Errorf("read %d of %d compressed bytes, want the reading stopped at 256 MiB decompressed", h.n, len(bomb))
	}
	if g := h.growth(); g > maxHostileHeap {
		t.Errorf("heap grew by %d bytes while reading, want at most %d", g, maxHostileHeap)
	}
	t.Logf("bomb %d bytes, read %d, heap growth %d bytes", len(bomb), h.n, h.growth())
}

// gzipBomb is a gzip stream of the document head and then mib MiB of
// white space: one member per MiB, each about 1 KB.
func gzipBomb(t *testing.T, mib int) []byte {
	t.Helper()
	member := func(prefix string) []byte {
		var b bytes.Buffer
		zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		zw.Write([]byte(prefix))
		zw.Write(bytes.Repeat([]byte{' '}, 1<<20))
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	out := member(docHead)
	one := member("")
	for i := 1; i < mib; i++ {
		out = append(out, one...)
	}
	return out
}

// readErr2 is readErr over a reader.
func readErr2(in io.Reader, lim Limits) error {
	r, err := NewReader(in, lim)
	if err != nil {
		return err
	}
	for {
		_, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// TestTokenAndEntryCaps: what cannot be read in pieces is refused at its
// cap, long before the document limits.
func TestTokenAndEntryCaps(t *testing.T) {
	endlessComment := io.MultiReader(strings.NewReader(docHead+"<!--"), spaces{})
	h := newHeapWatch(endlessComment)
	wantLimit(t, readErr2(h, Limits{}), "MaxTokenLen", true)
	if h.n > 1<<20 {
		t.Errorf("an endless comment was refused after %d bytes, want MaxTokenLen (256 KiB)", h.n)
	}

	ext := `<x:e xmlns:x="urn:x">` + strings.Repeat("d", 60<<10) + `</x:e>`
	fat := doc(urlEl("http://example.com/a", strings.Repeat(ext, 20)), urlEl("http://example.com/b"))
	r, err := NewReader(strings.NewReader(fat), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Next()
	wantLimit(t, err, "MaxEntryBytes", false)
	e, err := r.Next()
	if err != nil || e.Loc != "http://example.com/b" {
		t.Fatalf("entry after the refused one: %v, %v", e, err)
	}

	empties := doc(urlEl("http://example.com/a", `<x:e xmlns:x="urn:x">`+strings.Repeat("<x:f/>", 400_000)+`</x:e>`))
	wantLimit(t, readErr([]byte(empties), Limits{}), "MaxEntryBytes", false)

	decls := docHead + strings.Repeat(`<x:e xmlns:x="urn:`+strings.Repeat("n", 60<<10)+`">`, 20)
	wantLimit(t, readErr([]byte(decls), Limits{}), "MaxEntryBytes", true)
}

// TestLongTextInPieces: runs of text longer than half the window are read
// in pieces, cut between characters, and read as encoding/xml reads them,
// whatever falls on the cut: a character of several bytes, "]]>", a line
// end, a reference. A 4 KiB window puts cuts every 2 KiB or so; the runs
// move across them a byte at a time.
func TestLongTextInPieces(t *testing.T) {
	small := Limits{MaxTokenLen: 4 << 10, MaxAttrLen: 64 << 10}
	for _, tail := range []string{"𝄞", "]]>", "é", "€", "]]", "\r\n", "&amp;"} {
		step := 11
		if tail == "𝄞" || tail == "]]>" {
			step = 1
		}
		for k := 0; k < 2200; k += step {
			text := strings.Repeat(" ", k) + tail + strings.Repeat("x", 300)
			data := []byte(doc(urlEl("http://example.com/a"), strings.Repeat(" ", 2000)+text, urlEl("http://example.com/b")))
			compareOutcomes(t, data, scanOutcome(data, small), xmlOutcome(data, small))
			if k%31 == 0 {
				data = []byte(doc(urlEl("http://example.com/a", "<x:e xmlns:x='urn:x'>"+text+"</x:e>")))
				compareOutcomes(t, data, scanOutcome(data, small), xmlOutcome(data, small))
			}
		}
	}
}
