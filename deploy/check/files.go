package check

import "path/filepath"

// deployDir is deploy/, relative to this package's directory, where go
// test runs.
const deployDir = ".."

// path is the file of deploy/ at rel, a slash-separated path.
func path(rel string) string { return filepath.Join(deployDir, filepath.FromSlash(rel)) }
