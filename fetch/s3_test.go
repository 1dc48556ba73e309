package fetch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/miniotest"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/s3"
)

// TestFetchIntoMinIO runs the workers against a real MinIO: bitstreams
// larger than the single-PUT size are streamed through a temporary object,
// and a copy with a wrong declared hash never becomes an object.
func TestFetchIntoMinIO(t *testing.T) {
	endpoint, access, secret := miniotest.Start(t)
	store, err := s3.New(context.Background(), s3.Config{
		Endpoint: endpoint, Bucket: "fetch-test", AccessKey: access, SecretKey: secret,
		CreateBucket: true, PartSize: s3.MinPartSize, SinglePutSize: 2048,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := startSim(t, sim.Config{Resources: 6, MinSize: 1000, MaxSize: 5000})
	if err := srv.SetFault("/res/6", sim.Fault{WrongHash: true}); err != nil {
		t.Fatal(err)
	}
	q := startQueue(t)
	changes := simChanges(t, srv)
	publishAndRun(t, q, store, srv, changes)

	eventually(t, 30*time.Second, "a dead letter and five events", func() bool {
		return len(deadLetters(t, q)) == 1 && len(events(t, q)) == 5 && streamMsgs(t, q, queue.StreamChanges) == 0
	})
	bad := deadLetters(t, q)[0]
	if !strings.HasPrefix(bad.Reason, "mismatch") || !strings.HasSuffix(bad.Evidence["uri"], "/res/6") {
		t.Fatalf("dead letter %q for %s, want a mismatch of /res/6", bad.Reason, bad.Evidence["uri"])
	}
	if _, err := store.Stat(context.Background(), bad.Evidence["computed_sha256"]); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the copy with a wrong declared hash is in the bucket (stat: %v)", err)
	}
	good := changes[:0]
	for _, c := range changes {
		if !strings.HasSuffix(c.URI, "/res/6") {
			good = append(good, c)
		}
	}
	checkEvents(t, q, store, srv, good)
}
