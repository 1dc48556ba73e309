// Package dumptest builds ResourceSync dump packages that a harvester must
// refuse, for the tests of every package that reads dumps. Only tests
// import it.
package dumptest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// HostilePackage is a Resource Dump package whose manifest is sound (it
// lists loc, stored at path with body, with the right length and SHA-256)
// but which also holds an entry named ../evil that the manifest does not
// list: reading it must never write outside the place it is unpacked to.
// path is the manifest's rs:md path, such as "/resources/a".
func HostilePackage(t testing.TB, loc, path string, body []byte) []byte {
	t.Helper()
	sum := sha256.Sum256(body)
	var manifest bytes.Buffer
	w, err := resourcesync.NewWriter(&manifest, &resourcesync.Header{MD: resourcesync.MD{Capability: resourcesync.CapResourceDumpManifest, At: time.Now().UTC()}})
	if err != nil {
		t.Fatal(err)
	}
	length := int64(len(body))
	if err := w.Write(&resourcesync.Entry{Loc: loc, MD: &resourcesync.MD{Path: path, Length: &length,
		Hash: resourcesync.Hashes{{Alg: resourcesync.SHA256, Value: hex.EncodeToString(sum[:])}}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range []struct {
		name string
		b    []byte
	}{{"manifest.xml", manifest.Bytes()}, {path[1:], body}, {"../evil", []byte("evil")}} {
		fw, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write(f.b); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
