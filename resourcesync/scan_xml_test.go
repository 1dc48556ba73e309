package resourcesync

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
)

// xmlSource gives the Reader tokens from encoding/xml's RawToken, as the
// reader was built before it had its own scanner. The tests read every
// document through both and compare.
type xmlSource struct {
	d   *xml.Decoder
	tok token
}

var _ tokenSource = (*xmlSource)(nil)

func newXMLSource(in io.Reader) *xmlSource {
	d := xml.NewDecoder(in)
	d.CharsetReader = charsetReader
	return &xmlSource{d: d}
}

func (x *xmlSource) line() int {
	l, _ := x.d.InputPos()
	return l
}

func (x *xmlSource) next() (*token, error) {
	tok, err := x.d.RawToken()
	if err != nil {
		return nil, err
	}
	t := &x.tok
	t.attrs = t.attrs[:0]
	switch v := tok.(type) {
	case xml.StartElement:
		t.kind, t.name = tokStart, []byte(qname(v.Name))
		for _, a := range v.Attr {
			t.attrs = append(t.attrs, attr{name: []byte(qname(a.Name)), value: []byte(a.Value)})
		}
	case xml.EndElement:
		t.kind, t.name = tokEnd, []byte(qname(v.Name))
	case xml.CharData:
		t.kind, t.data = tokText, v
	case xml.Comment:
		t.kind, t.data = tokComment, v
	case xml.ProcInst:
		t.kind, t.name, t.data = tokPI, []byte(v.Target), v.Inst
	case xml.Directive:
		return nil, fmt.Errorf("declaration <!%.40s> refused", v)
	}
	return t, nil
}

// outcome is what reading a document gives: the header, then for each
// call of Next an entry or an error, up to io.EOF or a fatal error.
type outcome struct {
	header  *Header
	entries []*Entry
	errs    []*Error // one per failed call, nil for an entry
	fatal   *Error
}

// readWith reads data through src, made from the opened input.
func readWith(data []byte, lim Limits, src func(io.Reader) tokenSource) outcome {
	lim = lim.withDefaults()
	var o outcome
	in, err := openInput(bytes.NewReader(data), lim)
	if err != nil {
		o.fatal = &Error{Err: err, Fatal: true}
		return o
	}
	r, err := newReader(src(in), lim, nil)
	if err != nil {
		o.fatal = asError(err)
		return o
	}
	o.header = r.Header()
	for {
		e, err := r.Next()
		if err == io.EOF {
			return o
		}
		if err != nil {
			re := asError(err)
			if re.Fatal {
				o.fatal = re
				return o
			}
			o.errs = append(o.errs, re)
			o.entries = append(o.entries, nil)
			continue
		}
		o.errs = append(o.errs, nil)
		o.entries = append(o.entries, e)
	}
}

func asError(err error) *Error {
	var re *Error
	if errors.As(err, &re) {
		return re
	}
	return &Error{Err: err, Fatal: true}
}

func scanOutcome(data []byte, lim Limits) outcome {
	lim = lim.withDefaults()
	return readWith(data, lim, func(in io.Reader) tokenSource { return newScanner(in, lim.MaxTokenLen) })
}

func xmlOutcome(data []byte, lim Limits) outcome {
	return readWith(data, lim, func(in io.Reader) tokenSource { return newXMLSource(in) })
}
