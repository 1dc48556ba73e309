package resourcesync

import (
	"bufio"
	"encoding/xml"
	"errors"
	"io"
)

// Writer writes one ResourceSync document, one entry at a time, straight
// to a buffer: no reflection, nothing kept per entry.
type Writer struct {
	bw    *bufio.Writer
	enc   encoder
	root  Root
	buf   []byte
	n     int64 // bytes written so far
	err   error
	close bool
}

// NewWriter writes the XML declaration, the root element with the Sitemap
// and ResourceSync namespaces and the header's own attributes and
// namespace declarations, then the header's rs:md, rs:ln and extension
// elements.
func NewWriter(w io.Writer, h *Header) (*Writer, error) {
	wr := &Writer{bw: bufio.NewWriterSize(w, 64<<10), root: h.Root}
	wr.enc.init(h.RootAttrs)
	wr.buf = wr.enc.appendHeader(wr.buf[:0], h)
	if err := wr.flushBuf(); err != nil {
		return nil, err
	}
	return wr, nil
}

// Write writes one entry as a url (urlset) or sitemap (sitemapindex)
// element.
func (w *Writer) Write(e *Entry) error {
	if w.err != nil {
		return w.err
	}
	if w.close {
		return errors.New("resourcesync: Write after Close")
	}
	if e.Loc == "" {
		return errors.New("resourcesync: entry without loc")
	}
	w.buf = w.enc.appendEntry(w.buf[:0], e, w.root)
	return w.flushBuf()
}

// Close ends the root element and flushes the buffer. It does not close
// the underlying writer, which belongs to the caller.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.close {
		return nil
	}
	w.close = true
	w.buf = append(w.buf[:0], "</"...)
	w.buf = append(w.buf, w.root.String()...)
	w.buf = append(w.buf, ">\n"...)
	if err := w.flushBuf(); err != nil {
		return err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Written is the number of bytes of the document so far, flushed or not.
func (w *Writer) Written() int64 { return w.n }

// writeRaw writes bytes already encoded, for the SplitWriter.
func (w *Writer) writeRaw(b []byte) error {
	if w.err != nil {
		return w.err
	}
	n, err := w.bw.Write(b)
	w.n += int64(n)
	if err != nil {
		w.err = err
	}
	return err
}

func (w *Writer) flushBuf() error {
	n, err := w.bw.Write(w.buf)
	w.n += int64(n)
	if err != nil {
		w.err = err
	}
	return err
}

// encoder turns the model into bytes. It knows the prefixes the root
// declares, so that namespaced attributes use them.
type encoder struct {
	prefixes map[string]string // namespace -> prefix declared on the root
	taken    map[string]bool   // prefixes declared on the root
	rootGen  []xml.Attr        // declarations the root needs but lacks
}

func (c *encoder) init(rootAttrs []xml.Attr) {
	c.prefixes = map[string]string{xmlNS: "xml"}
	c.taken = map[string]bool{"rs": true, "xml": true, "xmlns": true}
	for _, a := range rootAttrs {
		if a.Name.Space == "xmlns" && a.Name.Local != "rs" {
			c.taken[a.Name.Local] = true
			if _, ok := c.prefixes[a.Value]; !ok {
				c.prefixes[a.Value] = a.Name.Local
			}
		}
	}
	// Namespaced root attributes whose namespace the root does not
	// declare get a declaration of their own.
	for _, a := range rootAttrs {
		if a.Name.Space != "" && a.Name.Space != "xmlns" {
			if _, ok := c.prefixes[a.Name.Space]; !ok {
				p := c.fresh()
				c.prefixes[a.Name.Space] = p
				c.rootGen = append(c.rootGen, xml.Attr{Name: xml.Name{Space: "xmlns", Local: p}, Value: a.Name.Space})
			}
		}
	}
}

// fresh returns a prefix the root does not use.
func (c *encoder) fresh() string {
	for i := 1; ; i++ {
		p := "ns" + itoa(i)
		if !c.taken[p] {
			c.taken[p] = true
			return p
		}
	}
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}
