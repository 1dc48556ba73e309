package resourcesync

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// Digest returns the bytes of h's digest when h is of an algorithm this
// package computes (md5, sha-1, sha-256) and its value is readable: hex,
// as the spec writes it, or base64 (standard or URL alphabet, padded or
// not), as the Python resync library wrote md5 before 2016 and Sources
// built on it still do. The two forms cannot be confused: for each
// algorithm their lengths differ. It returns nil for any other value, a
// digest that cannot be verified.
func (h Hash) Digest() []byte {
	n := digestLen(h.Alg)
	if n == 0 {
		return nil
	}
	v := h.Value
	if len(v) == 2*n {
		if b, err := hex.DecodeString(v); err == nil {
			return b
		}
		return nil
	}
	if len(v) > base64.StdEncoding.EncodedLen(n) {
		return nil
	}
	for _, enc := range [...]*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(v); err == nil && len(b) == n {
			return b
		}
	}
	return nil
}

// hashNote says what reading a hash attribute had to tolerate, for the
// reader's warnings.
type hashNote uint8

const (
	noteBase64     hashNote = 1 << iota // a digest in base64, rewritten in hex
	noteUnreadable                      // a digest of a known algorithm that is neither
)

// normalize rewrites a readable digest of a known algorithm as lowercase
// hex, the form the catalog and the blob writers use, so that every later
// comparison is of one form. An unreadable one is kept as written: it is
// ignored for verification (Verify) and flagged by the reader.
func (h *Hash) normalize() hashNote {
	n := digestLen(h.Alg)
	if n == 0 {
		return 0
	}
	if len(h.Value) == 2*n {
		if low := strings.ToLower(h.Value); isHex(low) {
			h.Value = low
			return 0
		}
	}
	b := h.Digest()
	if b == nil {
		return noteUnreadable
	}
	h.Value = hex.EncodeToString(b)
	return noteBase64
}

// Verify compares the declared digests with computed ones, digest by
// digest: "md5:E+0tzxHYD0ohNZG+DFqXrA==" and the hex md5 of the same bytes
// agree. Every algorithm present in both must agree; an algorithm only
// one side knows is not compared, and neither is a declared digest that
// cannot be read (Digest is nil): it says nothing about the bytes. It
// fails when something readable was declared but nothing could be
// compared, since nothing was checked.
func (hs Hashes) Verify(computed Hashes) error {
	checked, declared := 0, 0
	for _, h := range hs {
		known := digestLen(h.Alg) > 0
		want := h.Digest()
		if known && want == nil {
			continue
		}
		declared++
		got := computed.Get(h.Alg)
		if got == "" {
			continue
		}
		if !known {
			if got != h.Value {
				return fmt.Errorf("%s mismatch: declared %s, computed %s", h.Alg, h.Value, got)
			}
		} else if g := (Hash{Alg: h.Alg, Value: got}).Digest(); !bytes.Equal(g, want) {
			return fmt.Errorf("%s mismatch: declared %s, computed %s", h.Alg, h.Value, got)
		}
		checked++
	}
	if checked == 0 && declared > 0 {
		return fmt.Errorf("no declared hash (%s) among the computed ones", hs)
	}
	return nil
}

// Verifiable returns the declared digests a Verify can check against the
// computed ones of this package: md5, sha-1 and sha-256 whose value can be
// read. A Source that declares none is taken on its length alone.
func (hs Hashes) Verifiable() Hashes {
	var out Hashes
	for _, h := range hs {
		if h.Digest() != nil {
			out = append(out, h)
		}
	}
	return out
}
