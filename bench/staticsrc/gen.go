package main

import (
	"bufio"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// genConfig says what Source gen writes.
type genConfig struct {
	Dir  string
	Base string
	N    int
	Size int64
	Seed int64
	// SHA256 declares each bitstream's sha-256 beside its md5, as an
	// aggregator republishing its copies (another viaduct) does.
	SHA256 bool
}

// genTime is every resource's lastmod and the lists' at: a fixed time, so
// that two generations of the same size are the same Source.
var genTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// generate writes the bitstreams and the documents that describe them.
func generate(g genConfig) error {
	g.Base = strings.TrimSuffix(g.Base, "/")
	if err := os.MkdirAll(filepath.Join(g.Dir, ".well-known"), 0o755); err != nil {
		return err
	}
	capURI := g.Base + "/capabilitylist.xml"
	rl, err := writeResourceList(g, capURI)
	if err != nil {
		return err
	}
	if err := writeDoc(filepath.Join(g.Dir, "capabilitylist.xml"), &resourcesync.Header{
		MD:    resourcesync.MD{Capability: resourcesync.CapCapabilityList},
		Links: []resourcesync.Link{{Rel: "up", Href: g.Base + "/.well-known/resourcesync"}},
	}, &resourcesync.Entry{Loc: rl, MD: &resourcesync.MD{Capability: resourcesync.CapResourceList}}); err != nil {
		return err
	}
	return writeDoc(filepath.Join(g.Dir, ".well-known", "resourcesync"), &resourcesync.Header{
		MD: resourcesync.MD{Capability: resourcesync.CapDescription},
	}, &resourcesync.Entry{Loc: capURI, MD: &resourcesync.MD{Capability: resourcesync.CapCapabilityList}})
}

// writeResourceList writes every bitstream and its entry, and returns the
// URI of the Resource List (or of its Index).
func writeResourceList(g genConfig, capURI string) (string, error) {
	sw, err := resourcesync.NewSplitWriter(fileParts{dir: g.Dir, base: g.Base}, &resourcesync.Header{
		MD:    resourcesync.MD{Capability: resourcesync.CapResourceList, At: genTime, Completed: genTime},
		Links: []resourcesync.Link{{Rel: "up", Href: capURI}},
	}, resourcesync.SplitConfig{TempDir: g.Dir})
	if err != nil {
		return "", err
	}
	rng := rand.New(rand.NewChaCha8(seed(g.Seed)))
	buf := make([]byte, 1<<20)
	for i := range g.N {
		rel := fmt.Sprintf("files/%02x/%07d", i%256, i)
		sums, err := writeBitstream(filepath.Join(g.Dir, rel), rng, buf, g.Size)
		if err != nil {
			return "", err
		}
		hashes := resourcesync.Hashes{{Alg: resourcesync.MD5, Value: sums.md5}}
		if g.SHA256 {
			hashes = append(hashes, resourcesync.Hash{Alg: resourcesync.SHA256, Value: sums.sha256})
		}
		size := g.Size
		if err := sw.Write(&resourcesync.Entry{Loc: g.Base + "/" + rel, LastMod: genTime, MD: &resourcesync.MD{
			Hash: hashes, Length: &size, Type: "application/octet-stream",
		}}); err != nil {
			return "", err
		}
	}
	res, err := sw.Close()
	if err != nil {
		return "", err
	}
	return res.URI, nil
}

// digests are a bitstream's md5 and sha-256 in hex.
type digests struct{ md5, sha256 string }

// writeBitstream writes size pseudo-random bytes to path and returns their
// digests.
func writeBitstream(path string, rng *rand.Rand, buf []byte, size int64) (digests, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return digests{}, err
	}
	f, err := os.Create(path)
	if err != nil {
		return digests{}, err
	}
	m, s := md5.New(), sha256.New()
	w := io.MultiWriter(f, m, s)
	for left := size; left > 0; {
		n := min(left, int64(len(buf)))
		for i := 0; i < int(n); i += 8 {
			v := rng.Uint64()
			for j := 0; j < 8 && i+j < int(n); j++ {
				buf[i+j] = byte(v >> (8 * j))
			}
		}
		if _, err := w.Write(buf[:n]); err != nil {
			f.Close()
			return digests{}, err
		}
		left -= n
	}
	return digests{md5: hex.EncodeToString(m.Sum(nil)), sha256: hex.EncodeToString(s.Sum(nil))}, f.Close()
}

func seed(s int64) (out [32]byte) {
	for i := range 8 {
		out[i] = byte(s >> (8 * i))
	}
	return out
}

// fileParts names the Resource List's parts resourcelist-N.xml and its
// index resourcelist.xml.
type fileParts struct{ dir, base string }

func (p fileParts) Create(n int) (io.WriteCloser, string, error) {
	name := "resourcelist.xml"
	if n > 0 {
		name = fmt.Sprintf("resourcelist-%d.xml", n)
	}
	f, err := os.Create(filepath.Join(p.dir, name))
	return f, p.base + "/" + name, err
}

// writeDoc writes a small document of one entry.
func writeDoc(path string, h *resourcesync.Header, e *resourcesync.Entry) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	w, err := resourcesync.NewWriter(bw, h)
	if err == nil {
		err = w.Write(e)
	}
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
