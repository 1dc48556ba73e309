//go:build !linux

package dir

import (
	"errors"
	"os"
)

var errNoAnon = errors.New("anonymous files are only made on Linux")

// openAnon has no anonymous files to offer here: temporaries are named.
func openAnon(string, bool) (*os.File, error) { return nil, errNoAnon }

func linkAnon(*os.File, string) error { return errNoAnon }

// anonWorks is false: the store uses named temporaries.
func anonWorks(string) bool { return false }
