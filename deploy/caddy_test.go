package deploy

import (
	"strconv"
	"strings"
	"testing"
)

// caddySite is what the tests read of a Caddyfile: the one site's port,
// its reverse_proxy upstreams and their health check path.
type caddySite struct {
	port      int
	upstreams []string
	healthURI string
}

// readCaddyfile reads the subset of the Caddyfile syntax deploy/compose
// uses: an optional global options block, then one site ":port { … }"
// holding one reverse_proxy. Anything else fails the test, so a change to
// the file that this reader would misread cannot pass unnoticed.
func readCaddyfile(t *testing.T, file string) caddySite {
	t.Helper()
	var (
		site  caddySite
		stack []string // the blocks open: "global", "site", "reverse_proxy"
		sites int
	)
	for i, line := range strings.Split(string(readFile(t, file)), "\n") {
		if c := strings.Index(line, "#"); c >= 0 {
			line = line[:c]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		bad := func() { t.Fatalf("%s:%d: %q is outside what the tests read", file, i+1, line) }
		opens := f[len(f)-1] == "{"
		if opens {
			f = f[:len(f)-1]
		}
		depth := len(stack)
		switch {
		case len(f) == 1 && f[0] == "}":
			if depth == 0 {
				bad()
			}
			stack = stack[:depth-1]
		case depth == 0 && opens && len(f) == 0:
			stack = append(stack, "global")
		case depth == 0 && opens && len(f) == 1 && strings.HasPrefix(f[0], ":"):
			p, err := strconv.Atoi(f[0][1:])
			if err != nil {
				bad()
			}
			site.port = p
			sites++
			stack = append(stack, "site")
		case depth == 1 && stack[0] == "global" && !opens:
		case depth == 1 && stack[0] == "site" && f[0] == "reverse_proxy":
			site.upstreams = append(site.upstreams, f[1:]...)
			if opens {
				stack = append(stack, "reverse_proxy")
			}
		case depth == 2 && stack[1] == "reverse_proxy" && !opens:
			if f[0] == "health_uri" && len(f) == 2 {
				site.healthURI = f[1]
			}
		default:
			bad()
		}
	}
	if len(stack) != 0 || sites != 1 || len(site.upstreams) == 0 {
		t.Fatalf("%s: want one site with a reverse_proxy and balanced braces", file)
	}
	return site
}
