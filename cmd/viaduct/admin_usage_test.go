package main

import (
	"strings"
	"testing"
)

// TestAdminUsage: a command that says too little or too much is refused
// with exit code 2 and its usage, in the words of the command line, before
// any node is asked.
func TestAdminUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"retry"}, "retry: say which dead letters: SEQ, --source NAME or --all\nusage: viaduct admin retry SEQ | --source NAME | --all"},
		{[]string{"purge", "7", "--all"}, "purge: say which dead letters: SEQ, --source NAME or --all"},
		{[]string{"retry", "--source", "a", "--all"}, "retry: say which dead letters"},
		{[]string{"status", "extra"}, `status: unexpected argument "extra"` + "\nusage: viaduct admin status"},
		{[]string{"sources", "a", "b"}, `sources: unexpected argument "b": one Source at a time`},
		{[]string{"sync"}, "sync: a Source's name is required\nusage: viaduct admin sync NAME [--wait]"},
		{[]string{"sync", "a", "--all"}, "sync: flag provided but not defined: -all"},
		{[]string{"deadletter", "x"}, `deadletter: "x" is not a dead letter's sequence number`},
		{[]string{"-o", "yaml", "status"}, "-o yaml: the output is table or json"},
		{[]string{}, "a command is required"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	} {
		code, out, errOut := runCLI(t, append([]string{"admin", "--url", "http://127.0.0.1:1"}, c.args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, "viaduct admin: "+c.want) {
			t.Errorf("admin %q: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %q", c.args, code, out, errOut, c.want)
		}
	}
}
