package storage

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckKey(t *testing.T) {
	good := strings.Repeat("0123456789abcdef", 4)
	if err := CheckKey(good); err != nil {
		t.Errorf("CheckKey(%q) = %v, want nil", good, err)
	}
	for _, bad := range []string{
		"",
		good[:63],
		good + "0",
		strings.ToUpper(good),
		"../" + good[3:],
		strings.Repeat("g", 64),
	} {
		err := CheckKey(bad)
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("CheckKey(%q) = %v, want an error wrapping ErrNotFound", bad, err)
		}
	}
}
