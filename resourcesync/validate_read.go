package resourcesync

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Validate reads a whole document from r, within lim, and validates it.
// What the reader refuses becomes an error Problem at its line: an entry
// the reader could not take (a bad datetime, hash or length) is reported
// and reading goes on; a fatal reader error (not XML, a limit passed) ends
// the report there. The error return is only for failures that say nothing
// about the document.
func Validate(r io.Reader, lim Limits, opts Options) (*Report, error) {
	rd, err := NewReaderAt(r, opts.Base, lim)
	if err != nil {
		p, ok := readerProblem(err)
		if !ok {
			return nil, fmt.Errorf("validate: read header: %w", err)
		}
		return &Report{Summary: Summary{Kind: KindUnknown}, Problems: []Problem{p}, Errors: 1}, nil
	}
	v := NewValidator(rd.Header(), opts)
	for {
		e, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			p, ok := readerProblem(err)
			if !ok {
				return nil, fmt.Errorf("validate: read entry after line %d: %w", rd.Line(), err)
			}
			v.Add(p)
			var re *Error
			if errors.As(err, &re) && re.Fatal {
				break
			}
			continue
		}
		v.Entry(e)
	}
	for _, w := range rd.Warnings() {
		v.Add(Problem{Line: w.Line, Severity: SeverityWarning, Msg: w.String()})
	}
	rep := v.Finish()
	// The reader's warnings come in with the line of their first
	// occurrence: put every problem back in document order.
	slices.SortStableFunc(rep.Problems, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
	return rep, nil
}

// readerProblem turns a reader Error into an error Problem at its line.
func readerProblem(err error) (Problem, bool) {
	var re *Error
	if !errors.As(err, &re) {
		return Problem{}, false
	}
	msg := fmt.Sprint(re.Err)
	if re.Limit != "" {
		msg = fmt.Sprintf("limit %s exceeded: %v", re.Limit, re.Err)
	}
	if re.Fatal {
		msg += " (reading stopped here)"
	}
	return Problem{Line: re.Line, Severity: SeverityError, Msg: msg}, true
}
