package dump

import (
	"archive/zip"
	"mime"
	"strings"
)

// storedTypes are media types whose bytes are already compressed:
// deflating them again costs time and gains nothing.
var storedTypes = map[string]bool{
	"application/zip":              true,
	"application/gzip":             true,
	"application/x-gzip":           true,
	"application/x-bzip2":          true,
	"application/x-xz":             true,
	"application/zstd":             true,
	"application/x-7z-compressed":  true,
	"application/vnd.rar":          true,
	"application/x-rar-compressed": true,
	"application/pdf":              true,
	"application/epub+zip":         true,
	"image/svg+xml":                false,
	"image/bmp":                    false,
	"image/tiff":                   false,
	"audio/wav":                    false,
	"audio/x-wav":                  false,
}

// methodFor chooses how a bitstream of media type typ goes into the ZIP:
// stored when its format is compressed already (archives, PDF, images other
// than SVG, BMP and TIFF, audio, video), deflated otherwise, unknown types
// included.
func methodFor(typ string) uint16 {
	mt, _, err := mime.ParseMediaType(typ)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(typ))
	}
	if stored, ok := storedTypes[mt]; ok {
		if stored {
			return zip.Store
		}
		return zip.Deflate
	}
	if strings.HasPrefix(mt, "image/") || strings.HasPrefix(mt, "video/") || strings.HasPrefix(mt, "audio/") {
		return zip.Store
	}
	return zip.Deflate
}
