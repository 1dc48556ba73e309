package dumptest

import (
	"archive/zip"
	"bytes"
	"io"
	"testing"
)

func TestHostilePackageHoldsManifestBitstreamAndEscape(t *testing.T) {
	b := HostilePackage(t, "http://example.org/a", "/resources/a", []byte("a bitstream"))
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(rc)
		rc.Close()
		got[f.Name] = string(body)
	}
	if len(got) != 3 || got["resources/a"] != "a bitstream" || got["../evil"] != "evil" ||
		!bytes.Contains([]byte(got["manifest.xml"]), []byte("http://example.org/a")) {
		t.Errorf("package entries = %q", got)
	}
}
