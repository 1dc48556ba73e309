package fixity

import (
	"strings"
	"testing"
)

// TestConfigValidate: the defaults are valid, 0 turns the audit off
// whatever the rest says, and a value out of range is refused with its
// field's name.
func TestConfigValidate(t *testing.T) {
	if err := Defaults().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if err := (Config{BytesPerSecond: 0, BlobsPerSecond: -1}).Validate(); err != nil {
		t.Errorf("audit off: %v", err)
	}
	for field, c := range map[string]Config{
		"fixity.bytes_per_second": {BytesPerSecond: -1},
		"fixity.blobs_per_second": {BytesPerSecond: 1 << 20, BlobsPerSecond: 0},
		"fixity.every":            {BytesPerSecond: 1 << 20, BlobsPerSecond: 10, Every: -1},
	} {
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%+v: error %v; want one naming %s", c, err, field)
		}
	}
}
