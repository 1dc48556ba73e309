package dump

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Close writes manifest.xml, with the header as it is now, and the ZIP's
// central directory, and copies the manifest to Config.ManifestCopy when
// set. It does not close the underlying writer. After a failed Add, Close
// only removes the temporary manifest and returns that failure.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	defer w.discard()
	if w.err != nil {
		return w.err
	}
	if err := w.closeManifest(); err != nil {
		w.err = err
		return err
	}
	if err := w.zw.Close(); err != nil {
		w.err = fmt.Errorf("dump writer: %w", err)
	}
	return w.err
}

func (w *Writer) closeManifest() error {
	if err := w.mw.Close(); err != nil {
		return fmt.Errorf("dump writer: manifest: %w", err)
	}
	// The entries were written after a header that may since have
	// changed (completed, until): write the header afresh and take only
	// the entries from the temporary file.
	var hb bytes.Buffer
	hw, err := resourcesync.NewWriter(&hb, w.h)
	if err != nil {
		return fmt.Errorf("dump writer: manifest header: %w", err)
	}
	if err := hw.Close(); err != nil {
		return fmt.Errorf("dump writer: manifest header: %w", err)
	}
	end := []byte("</urlset>\n")
	head, ok := bytes.CutSuffix(hb.Bytes(), end)
	if !ok {
		return fmt.Errorf("dump writer: manifest header does not end in %q", end)
	}
	st, err := w.tmp.Stat()
	if err != nil {
		return fmt.Errorf("dump writer: manifest: %w", err)
	}
	body := io.NewSectionReader(w.tmp, w.hdrLen, st.Size()-w.hdrLen-int64(len(end)))
	fh := &zip.FileHeader{Name: ManifestName, Method: zip.Deflate, Modified: manifestTime(w.h)}
	fh.SetMode(0o644)
	zf, err := w.zw.CreateHeader(fh)
	if err != nil {
		return fmt.Errorf("dump writer: manifest: %w", err)
	}
	out := zf
	if w.cfg.ManifestCopy != nil {
		out = io.MultiWriter(zf, w.cfg.ManifestCopy)
	}
	if _, err := io.Copy(out, io.MultiReader(bytes.NewReader(head), body, bytes.NewReader(end))); err != nil {
		return fmt.Errorf("dump writer: manifest: %w", err)
	}
	return nil
}

// manifestTime is the manifest's modification time in the ZIP: the end
// of what it describes.
func manifestTime(h *resourcesync.Header) time.Time {
	for _, t := range []time.Time{h.MD.Completed, h.MD.Until, h.MD.At, h.MD.From} {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}
