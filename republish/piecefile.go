package republish

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The cut of a closed period never changes, and finding it again walks
// every change of the period: a minute for a consortium's baseline of
// 50,000,000 changes in one period, which a node would otherwise pay on
// the first request for that period's lists after every restart. So a
// closed period's cut, once walked, is kept on disk beside the document
// cache (piece-* files, which the cache's clearing at start leaves
// alone), with the period's change count it was walked at; it is read
// back only while the catalog still counts that many changes in the
// period (retention may have cut it since). No document cache, no file.

// pieceFile is what one file holds: the period's change count and the
// pieces' starts, in µs from the period's start.
type pieceFile struct {
	Changes int64   `json:"changes"`
	Starts  []int64 `json:"starts_us"`
}

func (s *Server) piecePath(coll string, start time.Time) string {
	return filepath.Join(s.cfg.Cache.Dir, "piece-"+hex.EncodeToString([]byte(coll))+"-"+strconv.FormatInt(start.UnixMicro(), 10)+".json")
}

// loadPieces returns the kept cut of the closed period of coll starting
// at start, if one was kept at n changes.
func (s *Server) loadPieces(coll string, start time.Time, n int64) ([]time.Time, bool) {
	if s.cache == nil {
		return nil, false
	}
	b, err := os.ReadFile(s.piecePath(coll, start))
	if err != nil {
		return nil, false
	}
	var f pieceFile
	if err := json.Unmarshal(b, &f); err != nil || f.Changes != n || len(f.Starts) == 0 || f.Starts[0] != 0 {
		return nil, false
	}
	out := make([]time.Time, len(f.Starts))
	for i, us := range f.Starts {
		out[i] = start.Add(time.Duration(us) * time.Microsecond)
	}
	return out, true
}

// savePieces keeps the cut p of the closed period of coll starting at
// start, walked at n changes; a failure is logged and costs only a walk
// after the next restart.
func (s *Server) savePieces(coll string, start time.Time, n int64, p []time.Time) {
	if s.cache == nil {
		return
	}
	f := pieceFile{Changes: n, Starts: make([]int64, len(p))}
	for i, t := range p {
		f.Starts[i] = t.Sub(start).Microseconds()
	}
	b, err := json.Marshal(f)
	if err == nil {
		err = replaceFile(s.piecePath(coll, start), b)
	}
	if err != nil {
		s.log.Warn("republish: could not keep a Change List period's cut; it is walked again after a restart", "collection", coll, "period", start.UTC().Format(periodLayout), "err", err)
	}
}

// replaceFile puts b at path whole or not at all (a temporary file
// renamed over it). It is not synced: a cut lost to a crash is walked
// again, and a file left empty does not read as one.
func replaceFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".piece-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("keeping %s: %w", path, err)
	}
	return nil
}
