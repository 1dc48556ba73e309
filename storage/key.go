package storage

import "fmt"

// KeyLen is the length of a blob key: a sha-256 digest in hex.
const KeyLen = 64

// CheckKey reports whether key can name a blob: 64 lowercase hex digits.
// Stores call it before building a path or object name from a key, so a key
// from a request can never reach outside the store. The error wraps
// ErrNotFound, because no blob can have such a key.
func CheckKey(key string) error {
	if len(key) != KeyLen {
		return fmt.Errorf("blob key %q: not a hex sha-256: %w", key, ErrNotFound)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return fmt.Errorf("blob key %q: not a lowercase hex sha-256: %w", key, ErrNotFound)
		}
	}
	return nil
}
