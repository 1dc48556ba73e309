package catalog

import (
	"encoding/binary"
	"slices"
)

// Coded strings (schema 14). A row's packs name an op and a media type
// in every change: "created" and "application/pdf" took 8 and 16 bytes
// each time, in the resource's copy_pack, in its change's pack, and
// again for the Source's op. Where the string is one of a table's, a
// pack keeps its code instead: a string of one byte below 0x20, which no
// op or media type written out is. A string that would read as a code
// (one such byte, or any string starting with 0x00) is written after a
// 0x00, so that every string reads back as it was given. Rows written
// before the step keep their strings, which read as themselves.
//
// The tables are part of the packs written: an entry is never removed
// or moved. A new one can only go at the end while codes remain below
// 0x20 (TestCodeTablesFitTheirByte); mediaCodes uses every one.

// opCodes are the codes of the ops of a change, the aggregator's and the
// Source's.
var opCodes = codeTable{"", "created", "updated", "deleted"}

// mediaCodes are the codes of the media types a repository's bitstreams
// and their links most often have. Code 1 is markType's, which stands for
// the row's copy's type in the Source's statement.
var mediaCodes = codeTable{"", "", "application/pdf", "text/plain", "text/html", "application/xml", "text/xml",
	"image/jpeg", "image/png", "image/tiff", "image/gif", "application/octet-stream", "application/zip",
	"application/json", "application/ld+json", "application/rdf+xml", "text/turtle", "text/csv", "application/msword",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	"application/vnd.openxmlformats-officedocument.presentationml.presentation",
	"application/vnd.ms-excel", "audio/mpeg", "video/mp4", "image/jp2", "application/epub+zip", "application/gzip",
	"application/x-tar", "text/markdown", "application/xhtml+xml", "image/svg+xml"}

// codeTable is a table of coded strings, indexed by code.
type codeTable []string

// codeLimit bounds the codes: a table has at most this many entries.
const codeLimit = 0x20

// code is s's code in t, or 0 (the entries left empty name nothing).
func (t codeTable) code(s string) byte {
	if s == "" {
		return 0
	}
	return byte(max(slices.Index(t, s), 0))
}

// coded appends s as a string of t: with p.codes its code, or s itself,
// escaped where it would read as a code; without, s as str writes it.
func (p *packer) coded(s string, t codeTable) {
	if !p.codes {
		p.str(s)
		return
	}
	if c := t.code(s); c != 0 {
		p.b = append(p.b, 1, c)
		return
	}
	if (len(s) == 1 && s[0] < codeLimit) || (len(s) > 0 && s[0] == 0) {
		p.b = binary.AppendUvarint(p.b, uint64(len(s)+1))
		p.b = append(p.b, 0)
		p.b = append(p.b, s...)
		return
	}
	p.str(s)
}

// coded reads a string coded writes (or str wrote, in rows before
// schema 14).
func (u *unpacker) coded(t codeTable) string {
	return u.decode(u.str(), t)
}

// decode is the string s stands for in t.
func (u *unpacker) decode(s string, t codeTable) string {
	switch {
	case len(s) == 1 && s[0] < codeLimit:
		if int(s[0]) >= len(t) || t[s[0]] == "" {
			u.fail()
			return ""
		}
		return t[s[0]]
	case len(s) > 0 && s[0] == 0:
		return s[1:]
	}
	return s
}
