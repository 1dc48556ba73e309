package admin

import (
	"regexp"
	"strings"
)

// Cause writes an error's root cause in one short line, for the status
// page, which shows the full error behind a click. Errors reach the page
// as text wrapped the Go way ("doing a: doing b: cause"), so the cause is
// found in the text: the first part that names a failure of the network
// or an HTTP status, with what it happened to (the request or the
// address before it), or else the last part. Lists in parentheses (every
// URI tried) are left to the full error.
func Cause(msg string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	parts := splitWrapped(line)
	if len(parts) == 0 {
		return ""
	}
	out := parts[len(parts)-1]
	for i, p := range parts {
		if !lowLevel.MatchString(p) {
			continue
		}
		out = p
		for j := i - 1; j >= 0; j-- {
			if target.MatchString(parts[j]) {
				out = parts[j] + ": " + p
				break
			}
		}
		break
	}
	return shorten(out, causeMax)
}

// causeMax bounds a cause's length, in characters.
const causeMax = 160

var (
	// lowLevel are the parts that name what really failed.
	lowLevel = regexp.MustCompile(`connection refused|connection reset|no such host|i/o timeout|network is unreachable|no route to host|` +
		`deadline exceeded|certificate|tls: |EOF|broken pipe|no space left|permission denied|^\d{3} [A-Z]`)
	// target are the parts that say what a low-level failure happened to.
	target = regexp.MustCompile(`^(GET|HEAD|POST) |^dial |^lookup |^read |^write |^open `)
)

// splitWrapped cuts s at each ": " outside parentheses and drops the
// parenthesised lists.
func splitWrapped(s string) []string {
	var parts []string
	var b strings.Builder
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth > 0:
		case c == ':' && i+1 < len(s) && s[i+1] == ' ':
			parts = appendPart(parts, b.String())
			b.Reset()
			i++
		default:
			b.WriteByte(c)
		}
	}
	return appendPart(parts, b.String())
}

func appendPart(parts []string, p string) []string {
	if p = strings.Join(strings.Fields(p), " "); p != "" {
		parts = append(parts, p)
	}
	return parts
}

// shorten cuts s to n characters, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
