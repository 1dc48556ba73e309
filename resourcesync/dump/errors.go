package dump

import (
	"errors"
	"fmt"
)

// Kinds of refusal, for errors.Is: callers decide from these whether a
// package is worth fetching again (ErrCorrupt may be a broken download)
// or is wrong at its Source (everything else).
var (
	// ErrUnsafe: a path that could escape the package, a link, a device.
	ErrUnsafe = errors.New("unsafe entry")
	// ErrLimit: a size, count or compression ratio over Limits.
	ErrLimit = errors.New("limit exceeded")
	// ErrMismatch: the manifest and the entries disagree (a listed path
	// missing, an entry not listed, a length or hash that differs).
	ErrMismatch = errors.New("manifest and package disagree")
	// ErrCorrupt: not a readable ZIP, truncated, a bad checksum, a size
	// the ZIP headers get wrong.
	ErrCorrupt = errors.New("corrupt package")
	// ErrUnsupported: encryption, a compression method other than store
	// and deflate.
	ErrUnsupported = errors.New("unsupported package feature")
	// ErrManifest: manifest.xml missing, not a manifest of the kind
	// expected, or breaking the spec's rules for manifests.
	ErrManifest = errors.New("bad manifest")
)

// Error is every refusal of a package: which package, which entry (a ZIP
// entry name, or a manifest entry's loc and line), and why. Kind is one of
// the Err* values above; Err, when set, is the underlying cause.
type Error struct {
	Package string
	Entry   string
	Reason  string
	Kind    error
	Err     error
}

func (e *Error) Error() string {
	s := "dump package " + e.Package
	if e.Entry != "" {
		s += ": entry " + e.Entry
	}
	s += ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap gives errors.Is and errors.As both the kind and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// refuse builds an *Error for package pkg.
func refuse(pkg, entry string, kind error, cause error, format string, args ...any) *Error {
	return &Error{Package: pkg, Entry: entry, Reason: fmt.Sprintf(format, args...), Kind: kind, Err: cause}
}

// quote writes an entry name so that control characters and the like in
// hostile names show as escapes, not as themselves.
func quote(name string) string { return fmt.Sprintf("%q", name) }
