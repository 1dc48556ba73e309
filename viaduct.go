// Package viaduct holds the messages that travel between viaduct's stages:
// a Change (upstream says a resource changed, on the CHANGES stream) and an
// Event (the aggregator changed its copy, on the EVENTS stream). Everything
// else lives in the package of the stage that owns it.
package viaduct

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"time"

	gojson "github.com/goccy/go-json"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Change is one upstream change to apply: what a Source said about one
// resource, read from a Resource List, a Change List, a Dump or a
// notification. Fetch workers turn it into an Event.
type Change struct {
	// Source, Collection, URI and Op are always set on a queued change;
	// an Event's upstream change leaves out those equal to the event's.
	Source     string `json:"source,omitempty"`
	Collection string `json:"collection,omitempty"`
	// URI is the resource's URI at the Source (its loc).
	URI string `json:"uri,omitempty"`
	// Op is created, updated or deleted.
	Op string `json:"op,omitempty"`
	// Time is the Source's time of the change: rs:md datetime (1.1) or
	// lastmod (1.0); for a baseline, the resource's lastmod or the list's at.
	Time time.Time `json:"time"`
	// Listed, for a change read from a baseline (a Resource List or
	// Dump), is that document's at: the Source's time at which the
	// resource was as listed. The catalog orders the statements about a
	// resource by the later of Time and Listed, so a resource listed again
	// after a deletion comes back even when its lastmod is older than the
	// deletion. For a change the Source gave no time (Time zero: an
	// entry of a Change List or notification without datetime or
	// lastmod), it is the time of the entry's place in its document: the
	// change before it, or the document's from. Zero for any other change.
	Listed time.Time `json:"listed,omitzero"`
	// Modified is the resource's lastmod at the Source, if stated.
	Modified time.Time           `json:"modified,omitzero"`
	Hash     resourcesync.Hashes `json:"hash,omitempty"`
	Length   *int64              `json:"length,omitempty"`
	Type     string              `json:"type,omitempty"`
	// Links are the entry's rs:ln links as the Source wrote them (via,
	// duplicate, describedby, ...): provenance and mirrors come from them.
	Links []resourcesync.Link `json:"links,omitempty"`
	// Doc is the document the change was read from, for error messages.
	Doc string `json:"doc,omitempty"`
	// Blob, when set, says the bitstream is already in the blob store:
	// the harvester took it from a Dump package, verified against the
	// package's manifest, and committed it before queueing the change.
	// A fetch worker then publishes the event without a GET, as long as
	// the blob is still there; otherwise it fetches as usual.
	Blob *StoredBlob `json:"blob,omitempty"`
	// Fresh says the change comes from a baseline that began with the
	// collection holding nothing: a fetch worker taking it for the first
	// time need not ask the catalog what it holds of the URI or of its
	// hash, the two reads that cost most of a first baseline's work. A
	// later delivery asks all the same (a crash may have left the
	// resource applied), and any event it publishes in vain is outranked
	// or recognised as a duplicate.
	Fresh bool `json:"fresh,omitempty"`
	// Repair, when set, is the sha-256 of this resource's stored copy,
	// which the fixity audit found not to hash to its key (or missing)
	// and quarantined: the change asks for the bitstream again whatever
	// the catalog and the blob store hold. A fetch worker GETs it without
	// looking for a reason to skip, verifies it as at ingest, and when
	// the bytes are the copy's again commits them and publishes no event,
	// since the catalog's record is already right (fetch/repair.go).
	Repair string `json:"repair,omitempty"`
}

// StoredBlob is a bitstream already committed to the blob store, with the
// digests computed of its bytes while it was stored.
type StoredBlob struct {
	// SHA256 is the blob's key.
	SHA256 string `json:"sha256"`
	MD5    string `json:"md5,omitempty"`
	Length int64  `json:"length"`
}

// Encode writes the change as the queue stores it, in JSON.
func (c *Change) Encode() ([]byte, error) { return json.Marshal(c) }

// Decode reads what Encode wrote. Changes and events are read with
// goccy/go-json, which reads what encoding/json writes exactly as it does
// (TestWireFormIsEncodingJSON) two to three times as fast: every change
// is read once by a fetch worker and every event once by each node's
// applier, tens of thousands a second in a baseline, and with
// encoding/json the reading took 6 % of a node's CPU. They are written
// with encoding/json: an event is written by a goroutine that lives for
// one change, and goccy/go-json's encoder grows a new goroutine's stack
// each time, which cost more than it saved.
func (c *Change) Decode(b []byte) error {
	*c = Change{}
	return gojson.Unmarshal(b, c)
}

// MsgID is the JetStream de-duplication id of the change: the same upstream
// change read twice (a re-polled Change List, a notification and the list
// that also records it) is queued once.
func (c *Change) MsgID() string {
	if c.Repair != "" {
		// A repair is not the upstream change read again: it must not be
		// taken for a duplicate of it, only of the same repair.
		return msgID("chg-", c.Source, c.URI, c.Op, c.stamp().UTC().Format(time.RFC3339Nano), c.Hash.String(), "repair", c.Repair)
	}
	return msgID("chg-", c.Source, c.URI, c.Op, c.stamp().UTC().Format(time.RFC3339Nano), c.Hash.String())
}

// stamp is the time that tells this change from other changes of its URI:
// the Source's time, or for a change without one the time of its place in
// its document (Listed), so that a resource deleted twice without a time
// is not taken for one deletion read twice.
func (c *Change) stamp() time.Time {
	if c.Time.IsZero() {
		return c.Listed
	}
	return c.Time
}

// Event is one change the aggregator made to its copy: a message on the
// EVENTS stream. Its stream sequence is the aggregator's order of changes and
// its timestamp the aggregator's change time; neither is stored here.
type Event struct {
	Source     string `json:"source"`
	Collection string `json:"collection"`
	// URI is the resource's URI at the Source; the aggregator's URI is
	// derived from it.
	URI string `json:"uri"`
	// Op is created, updated or deleted.
	Op string `json:"op"`
	// The aggregator's copy: its sha-256 is also its blob key.
	SHA256 string `json:"sha256,omitempty"`
	MD5    string `json:"md5,omitempty"`
	Length int64  `json:"length"`
	Type   string `json:"type,omitempty"`
	// Upstream is the change as the Source stated it: the origin's times,
	// hashes and links, which provenance passes on.
	Upstream Change `json:"upstream"`
}

// eventJSON is Event without its methods, for encoding/json.
type eventJSON Event

// eventWire is an event as the queue writes it: upstream_as_copy says that
// the upstream change's hash, length and type, left out, are the copy's:
// its md5 and sha-256 in that order, its length and its type.
type eventWire struct {
	*eventJSON
	UpstreamAsCopy bool `json:"upstream_as_copy,omitempty"`
}

// Encode writes the event as JSON without repeating itself. The upstream
// change leaves out its source, collection, URI and op where they equal
// the event's; its hash, length and type where they are exactly the
// copy's, as when a Source states both digests; and the document it was
// read from, the blob a Dump brought and a fresh baseline's mark, which
// only the harvester and the fetch worker use, and a repair's mark. EVENTS holds every event for as long as it is kept,
// and JetStream holds its newest blocks in memory: the repetitions were
// two fifths of an event. The queue encodes events with Encode rather
// than json.Marshal, which would check and compact MarshalJSON's output
// once more.
func (e *Event) Encode() ([]byte, error) {
	c := *e
	up := &c.Upstream
	if up.Source == c.Source {
		up.Source = ""
	}
	if up.Collection == c.Collection {
		up.Collection = ""
	}
	if up.URI == c.URI {
		up.URI = ""
	}
	if up.Op == c.Op {
		up.Op = ""
	}
	up.Doc, up.Blob, up.Fresh, up.Repair = "", nil, false, ""
	w := eventWire{eventJSON: (*eventJSON)(&c)}
	if c.upstreamIsCopy() {
		up.Hash, up.Length, up.Type = nil, nil, ""
		w.UpstreamAsCopy = true
	}
	return json.Marshal(w)
}

// upstreamIsCopy reports whether the upstream change states exactly the
// copy's hash (md5, then sha-256), length and type.
func (e *Event) upstreamIsCopy() bool {
	up := &e.Upstream
	return e.MD5 != "" && e.SHA256 != "" && len(up.Hash) == 2 &&
		up.Hash[0] == resourcesync.Hash{Alg: resourcesync.MD5, Value: e.MD5} &&
		up.Hash[1] == resourcesync.Hash{Alg: resourcesync.SHA256, Value: e.SHA256} &&
		up.Length != nil && *up.Length == e.Length && up.Type == e.Type
}

// MarshalJSON is Encode, for encoding/json.
func (e Event) MarshalJSON() ([]byte, error) { return e.Encode() }

// UnmarshalJSON is Decode, for encoding/json.
func (e *Event) UnmarshalJSON(b []byte) error { return e.Decode(b) }

// Decode reads what Encode wrote, and events written whole, as before
// Encode left out repetitions. The queue decodes events with it rather
// than json.Unmarshal, which would check the input once more.
func (e *Event) Decode(b []byte) error {
	*e = Event{}
	w := eventWire{eventJSON: (*eventJSON)(e)}
	if err := gojson.Unmarshal(b, &w); err != nil {
		return err
	}
	up := &e.Upstream
	if up.Source == "" {
		up.Source = e.Source
	}
	if up.Collection == "" {
		up.Collection = e.Collection
	}
	if up.URI == "" {
		up.URI = e.URI
	}
	if up.Op == "" {
		up.Op = e.Op
	}
	if w.UpstreamAsCopy {
		n := e.Length
		up.Hash = resourcesync.Hashes{{Alg: resourcesync.MD5, Value: e.MD5}, {Alg: resourcesync.SHA256, Value: e.SHA256}}
		up.Length, up.Type = &n, e.Type
	}
	return nil
}

// msgID is prefix and a digest of the fields: 128 bits of sha-256 in
// base64url, 26 bytes in all. JetStream keeps every id of its duplicate
// window in memory, and the fields themselves (a URI, times, hashes) run to
// a few hundred bytes: a baseline of a million resources inside the window
// would hold hundreds of megabytes of ids. Each field is preceded by its
// length, so no two lists of fields share a digest input.
func msgID(prefix string, fields ...string) string {
	h := sha256.New()
	var n [20]byte
	for _, f := range fields {
		h.Write(strconv.AppendInt(n[:0], int64(len(f)), 10))
		h.Write([]byte{':'})
		h.Write([]byte(f))
	}
	var sum [sha256.Size]byte
	return prefix + base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0])[:16])
}
