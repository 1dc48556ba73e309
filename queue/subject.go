package queue

import (
	"fmt"
	"strings"
)

// Stream names and the subjects they hold. A source or collection name is
// one subject token, encoded by EncodeToken.
const (
	StreamChanges = "CHANGES"
	StreamEvents  = "EVENTS"
	StreamDead    = "DEADLETTER"

	changesPrefix = "changes."
	eventsPrefix  = "events."
	deadPrefix    = "dead."
)

// ChangeSubject is the subject a change from source is published on.
func ChangeSubject(source string) string { return changesPrefix + EncodeToken(source) }

// EventSubject is the subject an event of collection is published on.
func EventSubject(collection string) string { return eventsPrefix + EncodeToken(collection) }

// deadSubject is where a message from subject goes when it is dead-lettered:
// dead.changes.<source> for a change.
func deadSubject(subject string) string { return deadPrefix + subject }

// EncodeToken turns any name into one NATS subject token, reversibly:
// letters, digits, '-' and '_' stay as they are, every other byte becomes
// %XX, and the empty name becomes a lone "%". Source names are operator
// labels and collection names may come from URIs, so dots, slashes and
// spaces are expected, and a wildcard in a name must never widen a filter.
func EncodeToken(name string) string {
	if name == "" {
		return "%"
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if isPlain(c) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// DecodeToken reverses EncodeToken.
func DecodeToken(token string) (string, error) {
	if token == "%" {
		return "", nil
	}
	var b strings.Builder
	for i := 0; i < len(token); i++ {
		c := token[i]
		switch {
		case isPlain(c):
			b.WriteByte(c)
		case c == '%' && i+2 < len(token) && isHex(token[i+1]) && isHex(token[i+2]):
			b.WriteByte(unhex(token[i+1])<<4 | unhex(token[i+2]))
			i += 2
		default:
			return "", fmt.Errorf("decode subject token %q: unexpected %q at byte %d", token, c, i)
		}
	}
	return b.String(), nil
}

// SubjectName returns the decoded last token of subject: the source of a
// change or dead letter, the collection of an event.
func SubjectName(subject string) (string, error) {
	return DecodeToken(subject[strings.LastIndexByte(subject, '.')+1:])
}

func isPlain(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'A' + 10
}
