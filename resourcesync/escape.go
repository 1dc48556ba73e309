package resourcesync

import (
	"unicode/utf8"
)

// appendEscaped appends s escaped for XML text or, when attr is set, for a
// double-quoted attribute value. White space that attribute normalisation
// would change, and a carriage return anywhere, are written as character
// references so that the value reads back the same. Characters XML cannot
// carry become U+FFFD. The common case, nothing to escape, is one append.
func appendEscaped(b []byte, s string, attr bool) []byte {
	i := 0
	for i < len(s) && !needsEscape(s[i]) {
		i++
	}
	if i == len(s) {
		return append(b, s...)
	}
	b = append(b, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '&':
				b = append(b, "&amp;"...)
			case c == '<':
				b = append(b, "&lt;"...)
			case c == '>':
				b = append(b, "&gt;"...)
			case c == '"' && attr:
				b = append(b, "&quot;"...)
			case c == '\r':
				b = append(b, "&#xD;"...)
			case c == '\n' && attr:
				b = append(b, "&#xA;"...)
			case c == '\t' && attr:
				b = append(b, "&#x9;"...)
			case c < 0x20 && c != '\n' && c != '\t':
				b = append(b, "\uFFFD"...)
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r == 0xFFFE || r == 0xFFFF {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return b
}

// appendEscapedBytes is appendEscaped of a byte slice; only a value that
// needs escaping is turned into a string.
func appendEscapedBytes(b, s []byte, attr bool) []byte {
	for _, c := range s {
		if needsEscape(c) {
			return appendEscaped(b, string(s), attr)
		}
	}
	return append(b, s...)
}

// needsEscape reports bytes that may need more than a copy: markup, control
// characters and the start of any multi-byte sequence (checked for
// validity the slow way).
func needsEscape(c byte) bool { return escapeTable[c] }

// escapeTable holds needsEscape for every byte: one load per byte instead
// of five comparisons, in a loop that sees every byte a list writes.
var escapeTable = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '&' || c == '<' || c == '>' || c == '"' || c < 0x20 || c >= utf8.RuneSelf
	}
	return t
}()
