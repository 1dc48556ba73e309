package resourcesync

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// MarshalText writes the attribute form, so that in JSON (queue messages,
// the catalog's provenance column, the provenance endpoint) Hashes is one
// string, "md5:… sha-256:…", as in a document's hash attribute. An array
// of {"Alg","Value"} objects, the form written before, took a third more
// bytes and an object per digest to decode.
func (hs Hashes) MarshalText() ([]byte, error) {
	for _, h := range hs {
		if h.Alg == "" || strings.ContainsAny(h.Alg, ": \t\r\n") || strings.ContainsAny(h.Value, " \t\r\n") {
			return nil, fmt.Errorf("hash %q:%q cannot be written as algorithm:digest", h.Alg, h.Value)
		}
	}
	return []byte(hs.String()), nil
}

// UnmarshalJSON reads what MarshalText wrote, exactly as it was (no
// lowercasing or checks of digest lengths: those were done when the hash
// was first read), and the array of {"Alg","Value"} objects that messages
// and catalog rows written before hold.
func (hs *Hashes) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '[' {
		var old []struct{ Alg, Value string }
		if err := json.Unmarshal(b, &old); err != nil {
			return err
		}
		*hs = nil
		for _, h := range old {
			*hs = append(*hs, Hash{Alg: h.Alg, Value: h.Value})
		}
		return nil
	}
	if string(b) == "null" {
		*hs = nil
		return nil
	}
	var s string
	if n := len(b); n >= 2 && b[0] == '"' && b[n-1] == '"' && !bytes.ContainsRune(b, '\\') {
		// The decoder hands over a valid literal: without escapes, its
		// bytes between the quotes are the string.
		s = string(b[1 : n-1])
	} else if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	var out Hashes
	for f := range strings.FieldsSeq(s) {
		alg, val, ok := strings.Cut(f, ":")
		if !ok || alg == "" {
			return fmt.Errorf("hash %q: want algorithm:digest", f)
		}
		out = append(out, Hash{Alg: alg, Value: val})
	}
	*hs = out
	return nil
}
