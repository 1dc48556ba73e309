package dump

import (
	"path"
	"strings"
)

// ManifestName is the name the spec gives the manifest inside a package.
const ManifestName = "manifest.xml"

// unsafeName says why a ZIP entry name could not be written to disk below
// one directory as it is, or "" when it can. A name is safe when it is a
// clean, relative, slash-separated path: no "..", no leading slash, no
// backslash, no drive letter, no control character. Directory entries
// (ending in "/") are judged without their slash.
func unsafeName(name string) string {
	name = strings.TrimSuffix(name, "/")
	switch {
	case name == "":
		return "empty path"
	case strings.HasPrefix(name, "/"):
		return "absolute path"
	case strings.ContainsRune(name, '\\'):
		return "backslash in path"
	case len(name) >= 2 && name[1] == ':' && isLetter(name[0]):
		return "drive letter in path"
	}
	for i := 0; i < len(name); i++ {
		if name[i] < 0x20 || name[i] == 0x7f {
			return "control character in path"
		}
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return "path escapes the package (..)"
		}
	}
	if path.Clean(name) != name {
		return "path is not clean"
	}
	return ""
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// zipName turns a manifest path into the ZIP entry name it designates. The
// spec writes paths with a leading slash, relative to the package root;
// one leading slash is removed, and a path without one is taken as
// relative too. What is left must be a safe name.
func zipName(mdPath string) (string, string) {
	name := strings.TrimPrefix(mdPath, "/")
	if strings.HasSuffix(name, "/") {
		return "", "path names a directory"
	}
	if why := unsafeName(name); why != "" {
		return "", why
	}
	return name, ""
}
