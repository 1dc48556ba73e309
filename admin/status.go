package admin

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
)

// NodeInfo is the node as a whole, for the status page and GET
// /admin/status.
type NodeInfo struct {
	// Name is the name the node holds leases under (queue.node_name).
	Name    string    `json:"name"`
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	// Ready and Conditions are what /readyz answers.
	Ready      bool        `json:"ready"`
	Conditions []Condition `json:"conditions"`
	NATS       NATSInfo    `json:"nats"`
	Blobs      BlobsInfo   `json:"blobs"`
	Catalog    CatalogInfo `json:"catalog"`
	// Rates are what this node's fetch workers stored lately.
	Rates Rates `json:"rates"`
	// Disk is the room left where the node writes: the data directory,
	// then the blob store.
	Disk []DiskInfo `json:"disk"`
	// Subscribers are the downstream WebSub subscriptions of this node's
	// hub and the deliveries queued for each.
	Subscribers []Subscriber `json:"subscribers"`
}

// Condition is one readiness condition.
type Condition struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Reason string `json:"reason,omitempty"`
}

// NATSInfo is the queue's connection and its streams.
type NATSInfo struct {
	Connected bool          `json:"connected"`
	URL       string        `json:"url"`
	Embedded  bool          `json:"embedded"`
	Error     string        `json:"error,omitempty"`
	Streams   []StreamDepth `json:"streams"`
}

// StreamDepth is one stream's size.
type StreamDepth struct {
	Name     string `json:"name"`
	Messages uint64 `json:"messages"`
	Bytes    uint64 `json:"bytes"`
}

// BlobsInfo is the blob store.
type BlobsInfo struct {
	Kind      string `json:"kind"`
	Where     string `json:"where"`
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
}

// CatalogInfo is the catalog's size and how far it is behind EVENTS.
type CatalogInfo struct {
	Resources   int64  `json:"resources"`
	Bytes       int64  `json:"bytes"`
	Changes     int64  `json:"changes"`
	LastApplied uint64 `json:"last_applied"`
	LastEvent   uint64 `json:"last_event"`
	Lag         uint64 `json:"lag_events"`
	Error       string `json:"error,omitempty"`
}

// Rates are resources and bytes stored per second over the last minutes
// (Over); Known is false until two samples have been taken.
type Rates struct {
	Known     bool     `json:"known"`
	Over      Duration `json:"over,omitzero"`
	Resources float64  `json:"resources_per_second"`
	Bytes     float64  `json:"bytes_per_second"`
}

// DiskInfo is the free space of one file system the node writes to. When
// Known is false, Error says why (an S3 store does not say).
type DiskInfo struct {
	Name  string `json:"name"`
	Where string `json:"where"`
	Known bool   `json:"known"`
	Free  uint64 `json:"free_bytes,omitempty"`
	Size  uint64 `json:"size_bytes,omitempty"`
	Error string `json:"error,omitempty"`
}

// Subscriber is one downstream subscription.
type Subscriber struct {
	Topic    string    `json:"topic"`
	Callback string    `json:"callback"`
	Expires  time.Time `json:"expires"`
	Queued   uint64    `json:"queued"`
}

func (s *Server) nodeStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.deps.Node(r.Context()))
}

//go:embed status.html
var statusHTML string

var statusTmpl = template.Must(template.New("status").Funcs(template.FuncMap{
	"ago":    ago,
	"ts":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
	"bytes":  humanBytes,
	"ubytes": func(n uint64) string { return humanBytes(int64(min(n, 1<<62))) },
	"dur":    func(d Duration) string { return d.String() },
	"plural": plural,
	"cause":  Cause,
	"rate":   func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
	"brate":  func(f float64) string { return humanBytes(int64(f)) + "/s" },
	"disk":   diskLine,
	"low":    func(d DiskInfo) bool { return d.Known && d.Size > 0 && d.Free*10 < d.Size },
}).Parse(statusHTML))

// plural writes n and the noun, with an s unless n is 1.
func plural(n any, noun string) string {
	s := fmt.Sprint(n)
	if s == "1" {
		return s + " " + noun
	}
	return s + " " + noun + "s"
}

// diskLine says how much room a file system has left.
func diskLine(d DiskInfo) string {
	if !d.Known {
		return d.Error
	}
	line := humanBytes(int64(min(d.Free, 1<<62))) + " free"
	if d.Size > 0 {
		line += fmt.Sprintf(" of %s (%d%%)", humanBytes(int64(min(d.Size, 1<<62))), d.Free*100/d.Size)
	}
	return line
}

// deadKind is one row of the dead letters by reason.
type deadKind struct {
	Kind    string
	Count   int
	Example queue.DeadLetter
}

type statusData struct {
	Node    NodeInfo
	Sources []SourceView
	Dead    []deadKind
	// DeadScanned is how many dead letters were read to group them;
	// DeadMore is true when there were more.
	DeadScanned int
	DeadMore    bool
	Now         time.Time
	Refresh     int
}

// deadScan bounds the dead letters the page reads to group them by kind.
const deadScan = 1000

func (s *Server) statusPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	d := statusData{Node: s.deps.Node(ctx), Sources: s.sources(ctx), Now: time.Now(), Refresh: 10}
	dls, _ := s.deps.DeadLetters.ListDeadLetters(ctx, queue.DeadQuery{Limit: deadScan + 1})
	if len(dls) > deadScan {
		dls, d.DeadMore = dls[:deadScan], true
	}
	d.DeadScanned = len(dls)
	byKind := map[string]*deadKind{}
	for _, dl := range dls {
		k := byKind[dl.Kind()]
		if k == nil {
			k = &deadKind{Kind: dl.Kind(), Example: dl}
			byKind[dl.Kind()] = k
		}
		k.Count++
	}
	for _, k := range byKind {
		d.Dead = append(d.Dead, *k)
	}
	slices.SortFunc(d.Dead, func(a, b deadKind) int { return cmp.Or(b.Count-a.Count, cmp.Compare(a.Kind, b.Kind)) })
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := statusTmpl.Execute(w, d); err != nil {
		s.log.Error("rendering the status page", "err", err)
	}
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return time.Since(t).Round(time.Second).String() + " ago"
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return template.HTMLEscapeString(itoa(n)) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return formatFloat(float64(n)/float64(div)) + " " + string("KMGTPE"[exp]) + "iB"
}
