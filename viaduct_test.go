package viaduct

import (
	"encoding/json"
	"encoding/xml"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

func TestMsgIDs(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	base := Change{Source: "s", Collection: "c", URI: "http://example.com/res1", Op: resourcesync.Updated, Time: at,
		Hash: resourcesync.Hashes{{Alg: resourcesync.MD5, Value: "1e0d5cb8ef6ba40c99b14c0237be735e"}}}
	id := base.MsgID()
	if len(id) != 26 || id[:4] != "chg-" {
		t.Fatalf("change id %q: want chg- and 22 characters", id)
	}
	same := base
	same.Collection = "other" // not part of what makes a change the same
	same.Time = at.In(time.FixedZone("x", 3600))
	if same.MsgID() != id {
		t.Errorf("the same change gave two ids: %s, %s", id, same.MsgID())
	}
	for name, edit := range map[string]func(*Change){
		"source": func(c *Change) { c.Source = "t" },
		"uri":    func(c *Change) { c.URI += "x" },
		"op":     func(c *Change) { c.Op = resourcesync.Deleted },
		"time":   func(c *Change) { c.Time = at.Add(time.Nanosecond) },
		"hash":   func(c *Change) { c.Hash = nil },
		"moved":  func(c *Change) { c.Source, c.URI = "s|http://example.com/res1", "" },
	} {
		c := base
		edit(&c)
		if c.MsgID() == id {
			t.Errorf("changing the %s kept the id %s", name, id)
		}
	}
	// A change the Source gave no time is told from another of its URI
	// by its place in its document (Listed): a resource deleted, created
	// and deleted again, with no times, within the duplicate window, is
	// not one deletion read twice.
	untimed := Change{Source: "s", URI: base.URI, Op: resourcesync.Deleted, Listed: at}
	again := untimed
	again.Listed = at.Add(time.Second)
	if untimed.MsgID() == again.MsgID() {
		t.Errorf("two deletions without a time at different places share the id %s", untimed.MsgID())
	}
}

func TestEventJSON(t *testing.T) {
	n := int64(1024)
	up := Change{Source: "s", Collection: "c", URI: "http://example.com/res1", Op: resourcesync.Updated,
		Time:   time.Date(2026, 11, 8, 13, 32, 55, 0, time.UTC),
		Listed: time.Date(2026, 11, 21, 23, 31, 19, 403782504, time.UTC),
		Hash:   resourcesync.Hashes{{Alg: resourcesync.MD5, Value: "1955cb7393c1d3c0b9f9184ba2501972"}},
		Length: &n, Type: "text/plain",
		Links: []resourcesync.Link{{Rel: "via", Href: "http://origin.example.org/res1",
			Hash: resourcesync.Hashes{{Alg: resourcesync.MD5, Value: "1955cb7393c1d3c0b9f9184ba2501972"}}}},
		Doc:  "http://example.com/changelist.xml",
		Blob: &StoredBlob{SHA256: "a649", Length: n},
	}
	ev := Event{Source: "s", Collection: "c", URI: up.URI, Op: resourcesync.Created, SHA256: "a649",
		MD5: "1955cb7393c1d3c0b9f9184ba2501972", Length: n, Type: "text/plain", Upstream: up}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	for _, left := range []string{`"doc"`, `"blob"`} {
		if strings.Contains(string(b), left) {
			t.Errorf("%s written: %s", left, b)
		}
	}
	for _, field := range []string{`"source"`, `"collection"`, `"uri"`} {
		if strings.Count(string(b), field) != 1 {
			t.Errorf("%s written %d times, want once: %s", field, strings.Count(string(b), field), b)
		}
	}
	if !strings.Contains(string(b), `"op":"updated"`) {
		t.Errorf("the upstream op, which differs from the event's, is missing: %s", b)
	}
	var got Event
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := ev
	want.Upstream.Doc, want.Upstream.Blob = "", nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back as\n%+v\nwant\n%+v", got, want)
	}

	// An event written whole, as before, reads the same; so does one
	// read into an Event that held another.
	type whole Event
	b, err = json.Marshal(whole(want))
	if err != nil {
		t.Fatal(err)
	}
	got = Event{Source: "old", Upstream: Change{URI: "http://stale.example/"}}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("whole event read back as\n%+v\nwant\n%+v", got, want)
	}
}

// An upstream change that states exactly the copy's digests, length and
// type is written as a flag, and reads back as it was; one that differs
// in any of them, or leaves any out, is written whole.
func TestEventJSONUpstreamAsCopy(t *testing.T) {
	const md5, sha = "1955cb7393c1d3c0b9f9184ba2501972", "a64930daaf000d69ff874913a191660bdf1932389378c13f2ce53ae54cf40c14"
	n, other := int64(1024), int64(1023)
	both := resourcesync.Hashes{{Alg: resourcesync.MD5, Value: md5}, {Alg: resourcesync.SHA256, Value: sha}}
	event := func(edit func(up *Change)) Event {
		l := n
		up := Change{Source: "s", Collection: "c", URI: "http://example.com/r", Op: resourcesync.Created,
			Time: time.Date(2026, 11, 8, 13, 32, 55, 0, time.UTC), Hash: append(resourcesync.Hashes(nil), both...),
			Length: &l, Type: "application/pdf"}
		edit(&up)
		return Event{Source: "s", Collection: "c", URI: up.URI, Op: resourcesync.Created, SHA256: sha, MD5: md5,
			Length: n, Type: "application/pdf", Upstream: up}
	}
	for _, c := range []struct {
		name   string
		edit   func(up *Change)
		asCopy bool
	}{
		{"the copy's", func(*Change) {}, true},
		{"no length stated", func(up *Change) { up.Length = nil }, false},
		{"another length", func(up *Change) { up.Length = &other }, false},
		{"md5 only", func(up *Change) { up.Hash = up.Hash[:1] }, false},
		{"digests in the other order", func(up *Change) { up.Hash[0], up.Hash[1] = up.Hash[1], up.Hash[0] }, false},
		{"no type stated", func(up *Change) { up.Type = "" }, false},
		{"no hash stated", func(up *Change) { up.Hash = nil }, false},
	} {
		ev := event(c.edit)
		b, err := ev.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), `"upstream_as_copy":true`); got != c.asCopy {
			t.Errorf("%s: written as the copy: %v, want %v: %s", c.name, got, c.asCopy, b)
		}
		if c.asCopy && strings.Count(string(b), sha) != 1 {
			t.Errorf("%s: the sha-256 written %d times: %s", c.name, strings.Count(string(b), sha), b)
		}
		var got Event
		if err := got.Decode(b); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(got, ev) {
			t.Errorf("%s: read back as\n%+v\nwant\n%+v", c.name, got, ev)
		}
	}
}

// TestWireFormIsEncodingJSON: changes and events are written byte for
// byte as encoding/json writes them, and read back from its bytes, so
// that the messages already in a stream and those written now are one
// format whatever library encodes them.
func TestWireFormIsEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 123456789, time.FixedZone("x", 3600))
	n := int64(1024)
	full := Change{Source: "s", Collection: "c", URI: "http://example.com/a?b=<c>&d=\u2028é\x7f", Op: resourcesync.Created,
		Time: at, Listed: at.Add(time.Second), Modified: at.Add(-time.Hour),
		Hash:   resourcesync.Hashes{{Alg: resourcesync.MD5, Value: "1e0d5cb8ef6ba40c99b14c0237be735e"}, {Alg: resourcesync.SHA256, Value: "ab"}},
		Length: &n, Type: "text/plain; charset=\"utf-8\"",
		Links: []resourcesync.Link{{Rel: "via", Href: "http://up.example.org/a", Modified: at, Length: &n, Pri: 2,
			Extra: []xml.Attr{{Name: xml.Name{Space: "urn:x", Local: "y"}, Value: "z\t\"q\""}}}},
		Doc: "http://example.com/rl.xml", Blob: &StoredBlob{SHA256: "ab", MD5: "cd", Length: 3}, Fresh: true}
	changes := []Change{{}, {Source: "s", Time: at}, full, {URI: "http://example.com/\xff\xfe", Op: resourcesync.Deleted, Listed: at}}
	for i, c := range changes {
		want, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Encode()
		if err != nil || string(got) != string(want) {
			t.Errorf("change %d: Encode wrote\n%s (%v)\nencoding/json writes\n%s", i, got, err, want)
		}
		var fromStd, fromOwn Change
		if err := json.Unmarshal(want, &fromStd); err != nil {
			t.Fatal(err)
		}
		if err := fromOwn.Decode(want); err != nil || !reflect.DeepEqual(fromOwn, fromStd) {
			t.Errorf("change %d: Decode read %+v (%v), encoding/json reads %+v", i, fromOwn, err, fromStd)
		}
	}
	events := []Event{
		{Source: "s", Collection: "c", URI: full.URI, Op: resourcesync.Created, SHA256: "ab", MD5: "cd", Length: n, Type: "text/plain", Upstream: full},
		{Source: "s", Collection: "c", URI: "http://example.com/gone", Op: resourcesync.Deleted, Upstream: Change{Source: "up", Op: resourcesync.Deleted, Time: at}},
	}
	for i, e := range events {
		got, err := e.Encode()
		if err != nil {
			t.Fatal(err)
		}
		// encoding/json's form of the same wire struct, compacted as
		// Encode's output is.
		w := eventWire{eventJSON: new(eventJSON)}
		if err := json.Unmarshal(got, &w); err != nil {
			t.Fatalf("event %d: encoding/json cannot read %s: %v", i, got, err)
		}
		want, err := json.Marshal(w)
		if err != nil || string(got) != string(want) {
			t.Errorf("event %d: Encode wrote\n%s\nencoding/json writes\n%s (%v)", i, got, want, err)
		}
		var back Event
		if err := back.Decode(want); err != nil {
			t.Fatal(err)
		}
		if again, _ := back.Encode(); string(again) != string(got) {
			t.Errorf("event %d: read back and written again as\n%s\nwant\n%s", i, again, got)
		}
	}
	for _, bad := range []string{`{`, `[]`, `{"source":1}`, `{"time":"x"}`, `{"hash":"md5"}`, `{"uri":"a"} x`} {
		var c Change
		if err := c.Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%s) accepted it", bad)
		}
	}
}

// FuzzChangeDecodeMatchesEncodingJSON: whatever the bytes, Change.Decode
// fails where encoding/json fails and otherwise reads the same change, and
// never panics: a message is read by a fetch worker of any node.
func FuzzChangeDecodeMatchesEncodingJSON(f *testing.F) {
	n := int64(7)
	for _, c := range []Change{{}, {Source: "s", URI: "http://example.com/a", Op: resourcesync.Created, Length: &n,
		Hash:  resourcesync.Hashes{{Alg: resourcesync.MD5, Value: "1e0d5cb8ef6ba40c99b14c0237be735e"}},
		Links: []resourcesync.Link{{Rel: "via", Href: "http://up.example.org/a"}}, Blob: &StoredBlob{SHA256: "ab"}, Fresh: true}} {
		b, _ := json.Marshal(&c)
		f.Add(b)
	}
	for _, s := range []string{`{`, `[]`, `{"source":1}`, `{"time":"x"}`, `{"hash":[{"Alg":"md5","Value":"x"}]}`, `{"SOURCE":"s","Uri":"u"}`, `{"uri":"a","uri":"b"}`, "{\"uri\":\"\xff\"}", `{"length":1e3}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var std, own Change
		errStd := json.Unmarshal(b, &std)
		errOwn := own.Decode(b)
		if (errStd == nil) != (errOwn == nil) {
			t.Fatalf("%q: encoding/json says %v, Decode says %v", b, errStd, errOwn)
		}
		if errStd == nil && !reflect.DeepEqual(std, own) {
			t.Fatalf("%q: encoding/json reads %+v, Decode reads %+v", b, std, own)
		}
	})
}

// FuzzEventDecode: whatever the bytes, Event.Decode fails where
// encoding/json fails on the same wire form and otherwise reads an event
// that Encode writes and Decode reads back unchanged, and never panics:
// the applier of every node reads EVENTS.
func FuzzEventDecode(f *testing.F) {
	n := int64(7)
	for _, e := range []Event{{}, {Source: "s", Collection: "c", URI: "http://example.com/a", Op: resourcesync.Created,
		SHA256: "ab", MD5: "cd", Length: 7, Type: "text/plain",
		Upstream: Change{Source: "s", URI: "http://up.example.org/a", Op: resourcesync.Updated, Length: &n,
			Hash: resourcesync.Hashes{{Alg: resourcesync.MD5, Value: "cd"}}}}} {
		b, _ := e.Encode()
		f.Add(b)
	}
	for _, s := range []string{`{`, `[]`, `null`, `{"source":1}`, `{"upstream_as_copy":true,"md5":"x","length":3}`, `{"upstream":{"uri":"u"},"uri":"v"}`, `{"upstream":null}`, "{\"uri\":\"\xff\"}", `{"length":1e3}`, `{"uri":"a","uri":"b"}`, `{"uri":"a"} x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var std Event
		errStd := json.Unmarshal(b, &eventWire{eventJSON: (*eventJSON)(&std)})
		var own Event
		errOwn := own.Decode(b)
		if (errStd == nil) != (errOwn == nil) {
			t.Fatalf("%q: encoding/json says %v, Decode says %v", b, errStd, errOwn)
		}
		if errOwn != nil {
			return
		}
		again, err := own.Encode()
		if err != nil {
			t.Fatalf("%q: read as %+v, which Encode refuses: %v", b, own, err)
		}
		var back Event
		if err := back.Decode(again); err != nil || !reflect.DeepEqual(back, own) {
			t.Fatalf("%q: read as %+v, written as %s, read back as %+v (%v)", b, own, again, back, err)
		}
	})
}

// TestEventLeavesOutWhatOnlyWorkersRead: what the harvester tells a fetch
// worker about a change (the document it was read from, a Dump's blob, a
// fresh baseline's mark, a repair) is not kept in EVENTS, where every
// event stays for as long as the stream keeps it.
func TestEventLeavesOutWhatOnlyWorkersRead(t *testing.T) {
	up := Change{Source: "s", Collection: "c", URI: "http://example.com/a", Op: resourcesync.Created,
		Time: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC), Doc: "http://example.com/rl.xml",
		Blob: &StoredBlob{SHA256: "ab", MD5: "cd", Length: 3}, Fresh: true, Repair: "ab"}
	ev := Event{Source: "s", Collection: "c", URI: up.URI, Op: up.Op, SHA256: "ab", MD5: "cd", Length: 3, Upstream: up}
	b, err := ev.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"doc"`, `"blob"`, `"fresh"`, `"repair"`} {
		if strings.Contains(string(b), key) {
			t.Errorf("the event is written with %s: %s", key, b)
		}
	}
	if !ev.Upstream.Fresh {
		t.Error("Encode changed the event it was given")
	}
}
