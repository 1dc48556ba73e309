package queue

import (
	"fmt"
	"strings"
)

// KVKey turns any name into one key of a KV bucket, reversibly for the
// reader of the bucket: letters, digits, '-' and '_' stay, every other
// byte becomes =XX, and the empty name becomes a lone "=". Source names
// are operator labels, with dots and spaces.
func KVKey(name string) string {
	if name == "" {
		return "="
	}
	var b strings.Builder
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(name); i++ {
		c := name[i]
		if isPlain(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('=')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// KVName reverses KVKey.
func KVName(key string) (string, error) {
	if key == "=" {
		return "", nil
	}
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c != '=' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(key) || !isHex(key[i+1]) || !isHex(key[i+2]) {
			return "", fmt.Errorf("queue: key %q: bad escape at byte %d", key, i)
		}
		b.WriteByte(unhex(key[i+1])<<4 | unhex(key[i+2]))
		i += 2
	}
	return b.String(), nil
}
