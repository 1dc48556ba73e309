package storage

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// Objects keeps named objects beside the blobs: whole files that are not
// content-addressed (the catalog snapshots, under snapshots/), which
// nothing serves, lists as a blob or collects. A name is a path of
// lowercase segments under one of ObjectPrefixes.
type Objects interface {
	// PutObject stores size bytes from r under name, replacing what was
	// there; a reader never sees a partly written object.
	PutObject(ctx context.Context, name string, r io.Reader, size int64) error
	// GetObject returns the object's bytes; ErrNotFound (wrapped) when
	// there is none. The caller closes it.
	GetObject(ctx context.Context, name string) (io.ReadCloser, error)
	// ListObjects calls fn with every object whose name starts with
	// prefix, in no particular order.
	ListObjects(ctx context.Context, prefix string, fn func(ObjectInfo) error) error
	// DeleteObject removes the object; one already gone is not an error.
	DeleteObject(ctx context.Context, name string) error
}

// ObjectInfo describes a named object.
type ObjectInfo struct {
	Name    string
	Size    int64
	ModTime time.Time
}

// ObjectPrefixes are the first segments a named object may have: none of
// them is a name the stores give their blobs, temporaries or quarantine.
var ObjectPrefixes = []string{"snapshots/"}

// CheckObjectName reports whether name can name an object: under one of
// ObjectPrefixes, made of lowercase letters, digits, '.', '-' and '_'
// between single slashes, no segment "." or "..". Stores call it before
// building a path from a name.
func CheckObjectName(name string) error {
	under := false
	for _, p := range ObjectPrefixes {
		under = under || (strings.HasPrefix(name, p) && len(name) > len(p))
	}
	if !under {
		return fmt.Errorf("object name %q: not under %s", name, strings.Join(ObjectPrefixes, ", "))
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("object name %q: empty, . or .. segment", name)
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
				return fmt.Errorf("object name %q: %q is not a lowercase letter, digit, '.', '-' or '_'", name, c)
			}
		}
	}
	return nil
}
