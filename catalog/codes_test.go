package catalog

import (
	"errors"
	"strings"
	"testing"
)

// TestCodeTablesFitTheirByte: every code of a table is below codeLimit,
// where no op or media type written out can be.
func TestCodeTablesFitTheirByte(t *testing.T) {
	for _, table := range []codeTable{opCodes, mediaCodes} {
		if len(table) > codeLimit {
			t.Errorf("a code table of %d entries, over %d: %q", len(table), codeLimit, table)
		}
	}
}

// TestCodedStringsReadBack: every string a coded field is given reads
// back as it was, whether it has a code, looks like one, or starts with
// the escape; a string written before codes (by str) reads as itself; a
// code no table entry has is a corrupt pack.
func TestCodedStringsReadBack(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, table := range []codeTable{opCodes, mediaCodes} {
		given := append([]string{"", "x", "\x01", "\x05", "\x1f", "\x00", "\x00\x03", "\x00abc", " ", "created ", long, "\x00" + long},
			table...)
		for _, s := range given {
			p := packer{codes: true}
			p.coded(s, table)
			p.int(42)
			u := unpacker{s: string(p.b)}
			if got := u.coded(table); got != s || u.int() != 42 || u.err != nil || u.i != len(u.s) {
				t.Errorf("%q coded as %q read back as %q (%v)", s, p.b, got, u.err)
			}
			if table.code(s) != 0 && len(p.b) != 3 {
				t.Errorf("%q has a code but packs to %q", s, p.b)
			}
		}
		// Written by str before schema 14: a table's string, or any
		// other that is not one byte below 0x20 nor starts with 0x00.
		for _, s := range append([]string{"text/plain; charset=utf-8", "x"}, table[2:]...) {
			var p packer
			p.str(s)
			u := unpacker{s: string(p.b)}
			if got := u.coded(table); got != s || u.err != nil {
				t.Errorf("%q as str wrote it read back as %q (%v)", s, got, u.err)
			}
		}
	}
	for _, s := range []string{"\x01\x00", "\x01\x1f", "\x01" + string(rune(len(opCodes)))} {
		u := unpacker{s: s}
		if got := u.coded(opCodes); !errors.Is(u.err, errPack) {
			t.Errorf("%q read as the op %q, %v; want errPack", s, got, u.err)
		}
	}
}
