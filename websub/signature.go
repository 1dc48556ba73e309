package websub

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strings"
)

// SignatureHeader is the header WebSub signs deliveries with.
const SignatureHeader = "X-Hub-Signature"

// MaxSecretLen is one past the longest hub.secret WebSub allows: it must be
// less than 200 bytes.
const MaxSecretLen = 200

// Errors of signature checks, for callers (and tests) to branch on.
var (
	ErrNoSignature  = errors.New("notification is not signed")
	ErrBadSignature = errors.New("notification signature does not match")
)

// Sign is the X-Hub-Signature value of body under secret: HMAC-SHA256,
// the strongest method WebSub lists that every subscriber must accept.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// VerifySignature checks an X-Hub-Signature value against body and secret,
// in any of the methods WebSub defines (sha1, sha256, sha384, sha512), in
// constant time.
func VerifySignature(secret string, body []byte, header string) error {
	if header == "" {
		return ErrNoSignature
	}
	method, sig, ok := strings.Cut(strings.TrimSpace(header), "=")
	if !ok {
		return fmt.Errorf("%w: malformed header %q", ErrBadSignature, header)
	}
	var h func() hash.Hash
	switch strings.ToLower(method) {
	case "sha1":
		h = sha1.New
	case "sha256":
		h = sha256.New
	case "sha384":
		h = sha512.New384
	case "sha512":
		h = sha512.New
	default:
		return fmt.Errorf("%w: unknown method %q", ErrBadSignature, method)
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return fmt.Errorf("%w: signature is not hex", ErrBadSignature)
	}
	m := hmac.New(h, []byte(secret))
	m.Write(body)
	if !hmac.Equal(got, m.Sum(nil)) {
		return ErrBadSignature
	}
	return nil
}
