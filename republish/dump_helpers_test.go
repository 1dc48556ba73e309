package republish

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/resourcesync/dump"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/dir"
)

// memState is a StateStore in memory.
type memState struct {
	mu sync.Mutex
	kv map[string][]byte
}

func (m *memState) Value(ctx context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.kv[key]
	if !ok {
		return nil, fmt.Errorf("value %s: %w", key, ErrNotFound)
	}
	return v, nil
}

func (m *memState) SetValue(ctx context.Context, key string, v []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.kv[key] = append([]byte(nil), v...)
	return nil
}

var _ StateStore = (*memState)(nil)

// dumpFixture is the standard fixture with Dumps enabled: its bitstreams
// copied into a real directory store, the Dumps' state in memory, and one
// HTTP server answering both the Server's and the Dumps' paths.
type dumpFixture struct {
	*fixture
	store *dir.Store
	state *memState
	dumps *Dumps
}

func newDumpFixture(t *testing.T, dc DumpConfig) *dumpFixture {
	t.Helper()
	dc.Enabled = true
	f := &dumpFixture{fixture: newFixture(t, Config{Dumps: dc}), state: &memState{kv: map[string][]byte{}}}
	f.fill()
	st, err := dir.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f.store = st
	for _, data := range f.blobs.blobs {
		f.putBlob(t, data)
	}
	f.reopen(t)
	f.ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if rest == "resourcedump.xml" || rest == "changedump.xml" || strings.HasPrefix(rest, "dumps/") {
			f.dumps.Handler().ServeHTTP(w, r)
			return
		}
		f.srv.Handler().ServeHTTP(w, r)
	})
	return f
}

// reopen makes new Dumps on the same store and state, as a restarted
// node does.
func (f *dumpFixture) reopen(t *testing.T) {
	t.Helper()
	d, err := NewDumps(context.Background(), f.srv, f.store, f.state, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.dumps = d
}

func (f *dumpFixture) putBlob(t testing.TB, data []byte) string {
	t.Helper()
	ctx := context.Background()
	w, err := f.store.Create(ctx, storage.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	key, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// pathOf is the path of one of the fixture's URIs on its test server.
func pathOf(t *testing.T, uri string) string {
	t.Helper()
	p, ok := strings.CutPrefix(uri, "http://mirror.example.org")
	if !ok {
		t.Fatalf("%s is not below the fixture's base URL", uri)
	}
	return p
}

// openPackage downloads a package and opens it, checking every bitstream.
func (f *dumpFixture) openPackage(t *testing.T, uri string, want resourcesync.Kind) *dump.Package {
	t.Helper()
	resp, body := f.get(t, pathOf(t, uri))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", uri, resp.Status)
	}
	path := filepath.Join(t.TempDir(), "package.zip")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := dump.Open(path, dump.Options{Name: uri, Want: want})
	if err != nil {
		t.Fatalf("open %s: %v", uri, err)
	}
	t.Cleanup(func() { p.Close() })
	if err := p.Check(context.Background()); err != nil {
		t.Fatalf("check %s: %v", uri, err)
	}
	return p
}

// readDump reads a Resource Dump or Change Dump document.
func (f *dumpFixture) readDump(t *testing.T, path string) (*resourcesync.Header, []*resourcesync.Entry, []byte) {
	t.Helper()
	resp, body := f.get(t, path)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	r, err := resourcesync.NewReader(strings.NewReader(string(body)), resourcesync.DefaultLimits())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var es []*resourcesync.Entry
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		es = append(es, e)
	}
	return r.Header(), es, body
}

var _ storage.Blobs = (*dir.Store)(nil)

// keys lists the keys of the fixture's bitstreams.
func (b *memBlobs) keys() []string {
	var ks []string
	for k := range b.blobs {
		ks = append(ks, k)
	}
	return ks
}
