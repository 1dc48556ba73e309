package node

import (
	"github.com/viaduct-mirror/viaduct/fetch"
	"github.com/viaduct-mirror/viaduct/harvester"
)

// fetchProgress hands the harvester the fetch pool's progress. The
// harvester is built before the pool (the pool takes its clients), so the
// pool is set once built, before either runs.
type fetchProgress struct{ pool *fetch.Pool }

var _ harvester.FetchProgress = (*fetchProgress)(nil)

func (f *fetchProgress) Progress(source string) (finished, failed uint64) {
	if f.pool == nil {
		return 0, 0
	}
	return f.pool.Progress(source)
}
