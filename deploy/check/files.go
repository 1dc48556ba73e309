package check

import "path/filepath"

// Dir is deploy/, relative to this package's directory, where go test
// runs it.
var Dir = ".."

// path is the file of deploy/ at rel, a slash-separated path.
func path(rel string) string { return filepath.Join(Dir, filepath.FromSlash(rel)) }
