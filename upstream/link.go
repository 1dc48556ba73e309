package upstream

import (
	"net/url"
	"strings"
)

// Link is one link of an HTTP Link header (RFC 8288).
type Link struct {
	// Target is the URI between < and >, as written (see Resolve).
	Target string
	// Rel holds the relation types, lower case; a rel parameter may name
	// several, separated by spaces.
	Rel []string
	// Params holds the other parameters by lower-case name; the first
	// occurrence of a parameter wins, as RFC 8288 asks.
	Params map[string]string
}

// HasRel reports whether l has relation type rel (case-insensitive).
func (l Link) HasRel(rel string) bool {
	for _, r := range l.Rel {
		if strings.EqualFold(r, rel) {
			return true
		}
	}
	return false
}

// Resolve returns the link's target resolved against base, the URI of the
// response that carried it.
func (l Link) Resolve(base string) string {
	b, err := url.Parse(base)
	if err != nil {
		return l.Target
	}
	t, err := b.Parse(l.Target)
	if err != nil {
		return l.Target
	}
	return t.String()
}

// ParseLinkHeader reads the value of one or more Link headers (joined with
// commas, as HTTP allows). It is tolerant: a malformed link is skipped up to
// the next comma outside quotes and angle brackets, never an error.
func ParseLinkHeader(s string) []Link {
	var links []Link
	p := linkParser{s: s}
	for {
		p.skip(" \t\r\n,")
		if p.i >= len(p.s) {
			return links
		}
		if p.s[p.i] != '<' {
			p.toNextLink()
			continue
		}
		end := strings.IndexByte(p.s[p.i:], '>')
		if end < 0 {
			return links
		}
		l := Link{Target: strings.TrimSpace(p.s[p.i+1 : p.i+end])}
		p.i += end + 1
		p.params(&l)
		links = append(links, l)
	}
}

type linkParser struct {
	s string
	i int
}

func (p *linkParser) skip(set string) {
	for p.i < len(p.s) && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

// toNextLink moves past the next comma outside a quoted string.
func (p *linkParser) toNextLink() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ',':
			p.i++
			return
		case '"':
			p.quoted()
			continue
		}
		p.i++
	}
}

// params reads ;name=value pairs up to the comma ending the link.
func (p *linkParser) params(l *Link) {
	for {
		p.skip(" \t\r\n")
		if p.i >= len(p.s) || p.s[p.i] != ';' {
			p.toNextLink()
			return
		}
		p.i++
		p.skip(" \t\r\n")
		start := p.i
		for p.i < len(p.s) && strings.IndexByte("=;, \t\r\n", p.s[p.i]) < 0 {
			p.i++
		}
		name := strings.ToLower(p.s[start:p.i])
		p.skip(" \t\r\n")
		value := ""
		if p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			p.skip(" \t\r\n")
			if p.i < len(p.s) && p.s[p.i] == '"' {
				value = p.quoted()
			} else {
				start := p.i
				for p.i < len(p.s) && strings.IndexByte(";, \t\r\n", p.s[p.i]) < 0 {
					p.i++
				}
				value = p.s[start:p.i]
			}
		}
		if name == "" {
			continue
		}
		if name == "rel" {
			if l.Rel == nil {
				l.Rel = strings.Fields(strings.ToLower(value))
				if l.Rel == nil {
					l.Rel = []string{}
				}
			}
			continue
		}
		if l.Params == nil {
			l.Params = map[string]string{}
		}
		if _, ok := l.Params[name]; !ok {
			l.Params[name] = value
		}
	}
}

// quoted reads a quoted-string starting at the opening quote and returns
// its unescaped content; an unterminated string runs to the end.
func (p *linkParser) quoted() string {
	var b strings.Builder
	p.i++ // opening quote
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch c {
		case '"':
			return b.String()
		case '\\':
			if p.i < len(p.s) {
				b.WriteByte(p.s[p.i])
				p.i++
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
