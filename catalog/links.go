package catalog

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// storedLink is an rs:ln link as the catalog's packs keep it (schema 9):
// short keys, and no key for a field the link does not have. The JSON of
// resourcesync.Link itself names every field, empty or not, and took 275
// bytes for a describedby link that has three (BenchmarkCatalogSize).
// The migration to schema 9 re-encodes the links columns of schema 8.
type storedLink struct {
	Rel      string              `json:"r,omitempty"`
	Href     string              `json:"h,omitempty"`
	Modified time.Time           `json:"m,omitzero"`
	Hash     resourcesync.Hashes `json:"x,omitempty"`
	Length   *int64              `json:"l,omitempty"`
	Type     string              `json:"t,omitempty"`
	Encoding string              `json:"e,omitempty"`
	Path     string              `json:"p,omitempty"`
	Pri      int                 `json:"q,omitempty"`
	Extra    []xml.Attr          `json:"a,omitempty"`
}

// encodeLinks is the JSON of links as a pack keeps it, "" for none.
func encodeLinks(links []resourcesync.Link) (string, error) {
	if len(links) == 0 {
		return "", nil
	}
	out := make([]storedLink, len(links))
	for i, l := range links {
		out[i] = storedLink{Rel: l.Rel, Href: l.Href, Modified: l.Modified, Hash: l.Hash, Length: l.Length,
			Type: l.Type, Encoding: l.Encoding, Path: l.Path, Pri: l.Pri, Extra: l.Extra}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("encode links: %w", err)
	}
	return string(b), nil
}

// decodeLinks reads what encodeLinks wrote.
func decodeLinks(s string) ([]resourcesync.Link, error) {
	var in []storedLink
	if err := json.Unmarshal([]byte(s), &in); err != nil {
		return nil, err
	}
	out := make([]resourcesync.Link, len(in))
	for i, l := range in {
		out[i] = resourcesync.Link{Rel: l.Rel, Href: l.Href, Modified: l.Modified, Hash: l.Hash, Length: l.Length,
			Type: l.Type, Encoding: l.Encoding, Path: l.Path, Pri: l.Pri, Extra: l.Extra}
	}
	return out, nil
}
