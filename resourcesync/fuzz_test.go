package resourcesync

import (
	"bytes"
	"io"
	"reflect"
	"testing"
)

// FuzzReader feeds the reader anything: it must not panic, and whatever it
// accepts (the header and every entry it returns, good entries of a
// document it later gives up on included) must write back to a document
// that reads as the same data, without errors.
func FuzzReader(f *testing.F) {
	addSpecSeeds(f)
	f.Add([]byte(extDoc))
	f.Add(gz(f, []byte(extDoc)))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), fuzzLimits)
		if err != nil {
			return
		}
		var es []*Entry
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				if re, ok := err.(*Error); ok && !re.Fatal {
					continue
				}
				break
			}
			e.Line = 0
			es = append(es, e)
		}
		out := writeAll(t, r.Header(), es)
		h2, es2 := readAll(t, out, fuzzLimits)
		if !reflect.DeepEqual(r.Header(), h2) {
			t.Fatalf("header changed on write and read:\n%+v\n%+v\n%s", r.Header(), h2, out)
		}
		if len(es) != len(es2) {
			t.Fatalf("%d entries became %d:\n%s", len(es), len(es2), out)
		}
		for i := range es {
			if !reflect.DeepEqual(es[i], es2[i]) {
				t.Fatalf("entry %d changed on write and read:\n%+v\n%+v\n%s", i, es[i], es2[i], out)
			}
		}
	})
}
