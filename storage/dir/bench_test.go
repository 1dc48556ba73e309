package dir

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/storage/storagetest"
)

// BenchmarkCommitParallel commits distinct 1 KiB blobs from several
// goroutines at once, as a node's fetch workers do, into fan-out
// directories that fill as a store's do. cpu-us/blob is the process's CPU
// time (user and kernel) per blob: contention on the store's directories
// shows there as kernel time; rounds/blob is how many sync rounds each
// blob cost, shared with the others. temporaries=named is the store where
// anonymous files cannot be made.
func BenchmarkCommitParallel(b *testing.B) {
	for _, tc := range []struct {
		workers int
		anon    bool
	}{{2, true}, {8, true}, {32, true}, {32, false}} {
		temps := map[bool]string{true: "anonymous", false: "named"}[tc.anon]
		// RunParallel runs a multiple of GOMAXPROCS goroutines.
		procs := runtime.GOMAXPROCS(0)
		per := max(1, tc.workers/procs)
		b.Run(fmt.Sprintf("workers=%d/temporaries=%s", per*procs, temps), func(b *testing.B) {
			s, err := New(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			if tc.anon && !s.anon {
				b.Skip("no anonymous temporaries on this system")
			}
			s.anon = tc.anon
			salt := rand.Uint64()
			var next atomic.Uint64
			b.SetParallelism(per)
			b.ReportAllocs()
			user0, sys0 := testutil.CPUTimes(b)
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				data := make([]byte, 1024)
				rand.NewChaCha8([32]byte{byte(salt)}).Read(data)
				for pb.Next() {
					binary.LittleEndian.PutUint64(data, salt)
					binary.LittleEndian.PutUint64(data[8:], next.Add(1))
					storagetest.Put(b, s, data)
				}
			})
			elapsed := time.Since(start)
			user1, sys1 := testutil.CPUTimes(b)
			user, sys := user1-user0, sys1-sys0
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "blobs/s")
			b.ReportMetric(float64(s.group.mark())/float64(b.N), "rounds/blob")
			b.ReportMetric(float64((user+sys).Microseconds())/float64(b.N), "cpu-us/blob")
			b.ReportMetric(float64(user.Microseconds())/float64(b.N), "user-us/blob")
			b.ReportMetric(float64(sys.Microseconds())/float64(b.N), "sys-us/blob")
		})
	}
}
