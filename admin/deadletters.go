package admin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
)

// DeadLetterView is a dead letter as the API shows it: the change itself
// as JSON when it decodes, else its bytes as a string.
type DeadLetterView struct {
	Seq       uint64            `json:"seq"`
	At        time.Time         `json:"at"`
	Source    string            `json:"source"`
	Kind      string            `json:"kind"`
	Reason    string            `json:"reason"`
	Evidence  map[string]string `json:"evidence,omitempty"`
	Delivered uint64            `json:"delivered"`
	Retries   int               `json:"retries"`
	Stream    string            `json:"stream"`
	OrigSeq   uint64            `json:"orig_seq"`
	Change    json.RawMessage   `json:"change,omitempty"`
	Payload   string            `json:"payload,omitempty"`
}

func viewDead(d queue.DeadLetter) DeadLetterView {
	v := DeadLetterView{Seq: d.Seq, At: d.At, Source: d.Source, Kind: d.Kind(), Reason: d.Reason, Evidence: d.Evidence,
		Delivered: d.Delivered, Retries: d.Retries, Stream: d.Stream, OrigSeq: d.OrigSeq}
	if json.Valid(d.Payload) {
		v.Change = d.Payload
	} else {
		v.Payload = string(d.Payload)
	}
	return v
}

// listDead answers GET /admin/deadletters?source=&after=&limit=.
func (s *Server) listDead(w http.ResponseWriter, r *http.Request) {
	q := queue.DeadQuery{Source: r.URL.Query().Get("source")}
	var err error
	if v := r.URL.Query().Get("after"); v != "" {
		if q.After, err = strconv.ParseUint(v, 10, 64); err != nil {
			writeError(w, fmt.Errorf("after=%q is not a sequence number: %w", v, errBadRequest))
			return
		}
	}
	if v := r.URL.Query().Get("limit"); v != "" {
		if q.Limit, err = strconv.Atoi(v); err != nil || q.Limit <= 0 || q.Limit > 10000 {
			writeError(w, fmt.Errorf("limit=%q is not a number from 1 to 10000: %w", v, errBadRequest))
			return
		}
	}
	dls, err := s.deps.DeadLetters.ListDeadLetters(r.Context(), q)
	if err != nil {
		writeError(w, err)
		return
	}
	out := make([]DeadLetterView, 0, len(dls))
	for _, d := range dls {
		out = append(out, viewDead(d))
	}
	writeJSON(w, http.StatusOK, out)
}

func seqOf(r *http.Request) (uint64, error) {
	v := r.PathValue("seq")
	seq, err := strconv.ParseUint(v, 10, 64)
	if err != nil || seq == 0 {
		return 0, fmt.Errorf("%q is not a dead letter's sequence number: %w", v, errBadRequest)
	}
	return seq, nil
}

func (s *Server) showDead(w http.ResponseWriter, r *http.Request) {
	seq, err := seqOf(r)
	if err == nil {
		var d queue.DeadLetter
		if d, err = s.deps.DeadLetters.DeadLetterAt(r.Context(), seq); err == nil {
			writeJSON(w, http.StatusOK, viewDead(d))
			return
		}
	}
	writeError(w, err)
}

// Fixed is the answer to a retry or a purge.
type Fixed struct {
	Retried uint64 `json:"retried,omitempty"`
	Purged  uint64 `json:"purged,omitempty"`
	Source  string `json:"source,omitempty"`
	Seq     uint64 `json:"seq,omitempty"`
}

func (s *Server) retryDead(w http.ResponseWriter, r *http.Request) {
	seq, err := seqOf(r)
	if err == nil {
		var d queue.DeadLetter
		if d, err = s.deps.DeadLetters.RetryDeadLetter(r.Context(), seq); err == nil {
			s.log.Info("dead letter retried", "seq", seq, "source", d.Source, "remote", r.RemoteAddr)
			writeJSON(w, http.StatusOK, Fixed{Retried: 1, Source: d.Source, Seq: seq})
			return
		}
	}
	writeError(w, err)
}

func (s *Server) purgeDead(w http.ResponseWriter, r *http.Request) {
	seq, err := seqOf(r)
	if err == nil {
		if err = s.deps.DeadLetters.PurgeDeadLetter(r.Context(), seq); err == nil {
			s.log.Info("dead letter purged", "seq", seq, "remote", r.RemoteAddr)
			writeJSON(w, http.StatusOK, Fixed{Purged: 1, Seq: seq})
			return
		}
	}
	writeError(w, err)
}

// allOrSource reads ?source= or ?all=true: a bulk operation must say
// which, so that a forgotten parameter never empties the whole stream.
func allOrSource(r *http.Request) (string, error) {
	src := r.URL.Query().Get("source")
	all, _ := strconv.ParseBool(r.URL.Query().Get("all"))
	if (src == "") == !all {
		return "", fmt.Errorf("say which dead letters: ?source=NAME or ?all=true: %w", errBadRequest)
	}
	return src, nil
}

func (s *Server) retryDeadAll(w http.ResponseWriter, r *http.Request) {
	src, err := allOrSource(r)
	if err != nil {
		writeError(w, err)
		return
	}
	n, err := s.deps.DeadLetters.RetryDeadLetters(r.Context(), src)
	s.log.Info("dead letters retried", "source", src, "count", n, "remote", r.RemoteAddr)
	if err != nil {
		writeError(w, fmt.Errorf("after retrying %d: %w", n, err))
		return
	}
	writeJSON(w, http.StatusOK, Fixed{Retried: uint64(n), Source: src})
}

func (s *Server) purgeDeadAll(w http.ResponseWriter, r *http.Request) {
	src, err := allOrSource(r)
	if err != nil {
		writeError(w, err)
		return
	}
	n, err := s.deps.DeadLetters.PurgeDeadLetters(r.Context(), src)
	if err != nil {
		writeError(w, err)
		return
	}
	s.log.Info("dead letters purged", "source", src, "count", n, "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, Fixed{Purged: n, Source: src})
}
