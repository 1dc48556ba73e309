package dump

import "github.com/viaduct-mirror/viaduct/resourcesync"

// Limits bounds what reading one package may cost, whatever the package
// says about itself. Sizes are measured on the bytes actually read, not
// taken from ZIP headers. A zero field means the default.
type Limits struct {
	// MaxPackageBytes is the largest ZIP file; default 4 GiB.
	MaxPackageBytes int64
	// MaxEntries is the most ZIP entries (manifest.xml included); default
	// 100,000, twice what a writer with the spec's list size produces.
	MaxEntries int
	// MaxEntryBytes is the largest bitstream, uncompressed; default 1 GiB.
	MaxEntryBytes int64
	// MaxTotalBytes is the most uncompressed bytes of all entries
	// together; default 4 GiB.
	MaxTotalBytes int64
	// MaxRatio is the highest ratio of uncompressed to compressed bytes,
	// per entry and for the package; default 200. Deflate of ordinary
	// text and markup stays far below; a run of zeros reaches 1,000.
	MaxRatio int64
	// RatioFloor is how many uncompressed bytes an entry (or the package)
	// may yield before MaxRatio applies, so that small, very compressible
	// files pass; default 1 MiB.
	RatioFloor int64
	// MaxDirectoryBytes bounds the ZIP central directory, which is read
	// into memory whole; default 32 MiB.
	MaxDirectoryBytes int64
	// MaxManifestBytes is the largest manifest.xml, uncompressed; default
	// 64 MiB.
	MaxManifestBytes int64
	// Manifest bounds the manifest as a document (entries, attribute
	// lengths...); zero fields take resourcesync's defaults.
	Manifest resourcesync.Limits
}

// DefaultLimits returns the limits for packages from public Sources: room
// for the largest packages the spec's community limits produce, none for
// a bomb.
func DefaultLimits() Limits {
	return Limits{
		MaxPackageBytes:   4 << 30,
		MaxEntries:        100_000,
		MaxEntryBytes:     1 << 30,
		MaxTotalBytes:     4 << 30,
		MaxRatio:          200,
		RatioFloor:        1 << 20,
		MaxDirectoryBytes: 32 << 20,
		MaxManifestBytes:  64 << 20,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	set64 := func(v *int64, def int64) {
		if *v <= 0 {
			*v = def
		}
	}
	set64(&l.MaxPackageBytes, d.MaxPackageBytes)
	set64(&l.MaxEntryBytes, d.MaxEntryBytes)
	set64(&l.MaxTotalBytes, d.MaxTotalBytes)
	set64(&l.MaxRatio, d.MaxRatio)
	set64(&l.RatioFloor, d.RatioFloor)
	set64(&l.MaxDirectoryBytes, d.MaxDirectoryBytes)
	set64(&l.MaxManifestBytes, d.MaxManifestBytes)
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	return l
}
