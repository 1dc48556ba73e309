package sim

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

func TestFaultStatus(t *testing.T) {
	src, base := serve(t, Config{Resources: 3})
	if err := src.SetFault("/res/1", Fault{Status: http.StatusServiceUnavailable, RetryAfter: 90 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := src.SetFault(PathChangeList, Fault{Status: http.StatusInternalServerError}); err != nil {
		t.Fatal(err)
	}
	if err := src.SetFault("/res/2", Fault{Status: http.StatusNotFound, Times: 1}); err != nil {
		t.Fatal(err)
	}
	resp, _ := get(t, base+"/res/1")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "90" {
		t.Fatalf("/res/1: %s, Retry-After %q", resp.Status, resp.Header.Get("Retry-After"))
	}
	if resp, _ := get(t, base+PathChangeList); resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("Change List Index: %s", resp.Status)
	}
	if resp, _ := get(t, base+"/res/2"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/res/2 first time: %s", resp.Status)
	}
	if resp, _ := get(t, base+"/res/2"); resp.StatusCode != http.StatusOK {
		t.Fatalf("/res/2 after the fault's one time: %s", resp.Status)
	}
	src.ClearFault("/res/1")
	if resp, _ := get(t, base+"/res/1"); resp.StatusCode != http.StatusOK {
		t.Fatalf("/res/1 after ClearFault: %s", resp.Status)
	}
	src.ClearFaults()
	if resp, _ := get(t, base+PathChangeList); resp.StatusCode != http.StatusOK {
		t.Fatalf("Change List Index after ClearFaults: %s", resp.Status)
	}
	if n := src.Requests()["/res/2"]; n != 2 {
		t.Fatalf("Requests counts %d for /res/2, want 2", n)
	}
}

// TestFaultAfter: a fault with After lets that many matching requests
// through as if it were not set (a fault set after it on a narrower
// pattern still applies to them), then applies for its Times.
func TestFaultAfter(t *testing.T) {
	src, base := serve(t, Config{Resources: 3})
	if err := src.SetFault("/res/*", Fault{Status: http.StatusServiceUnavailable, After: 2, Times: 1}); err != nil {
		t.Fatal(err)
	}
	if err := src.SetFault("/res/2", Fault{Status: http.StatusNotFound, Times: 1}); err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, p := range []string{"/res/1", "/res/2", "/res/3", "/res/1"} {
		resp, _ := get(t, base+p)
		got = append(got, resp.StatusCode)
	}
	if want := []int{200, 404, 503, 200}; !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
}

// TestRequestCounts: bitstreams are counted by id, any other path (one
// that only looks like a bitstream's included) by path, and Requests
// reports both under the path that was asked for.
func TestRequestCounts(t *testing.T) {
	src, base := serve(t, Config{Resources: 3})
	for _, p := range []string{"/res/2", "/res/2", "/res/3", "/res/02", "/res/x", "/res/99999999999", PathResourceList} {
		get(t, base+p)
	}
	want := map[string]int{"/res/2": 2, "/res/3": 1, "/res/02": 1, "/res/x": 1, "/res/99999999999": 1, PathResourceList: 1}
	got := src.Requests()
	for p, n := range want {
		if got[p] != n {
			t.Errorf("%s: %d requests counted, want %d", p, got[p], n)
		}
	}
	if len(got) != len(want) {
		t.Errorf("counted %v, want %v", got, want)
	}
	src.ResetRequests()
	if got := src.Requests(); len(got) != 0 {
		t.Errorf("after ResetRequests: %v", got)
	}
}

// TestFaultDeclared checks that wrong hashes and lengths are declared in
// both lists while the bitstream stays right.
func TestFaultDeclared(t *testing.T) {
	src, base := serve(t, Config{Resources: 4})
	upd := src.Update(1)[0]
	path := strings.TrimPrefix(upd.URI, base)
	if err := src.SetFault(path, Fault{WrongHash: true, WrongLength: true}); err != nil {
		t.Fatal(err)
	}
	_, body := get(t, upd.URI)
	var lists []*resourcesync.Entry
	for _, e := range read(t, base+PathResourceList).Entries {
		if e.Loc == upd.URI {
			lists = append(lists, e)
		}
	}
	lists = append(lists, read(t, base+"/changelist-0.xml").Entries...)
	if len(lists) != 2 {
		t.Fatalf("found %d entries for %s", len(lists), upd.URI)
	}
	for _, e := range lists {
		if e.MD.Hash.Get(resourcesync.SHA256) == upd.SHA256 || e.MD.Hash.Get(resourcesync.MD5) == upd.MD5 {
			t.Errorf("entry declares the right hash %s", e.MD.Hash)
		}
		if *e.MD.Length != int64(len(body))+1 {
			t.Errorf("entry declares length %d, bitstream has %d", *e.MD.Length, len(body))
		}
	}
	if snap := src.Snapshot()[upd.URI]; snap.SHA256 != upd.SHA256 || snap.Length != int64(len(body)) {
		t.Fatalf("Snapshot follows the fault: %+v", snap)
	}
}

func TestFaultTruncate(t *testing.T) {
	src, base := serve(t, Config{Resources: 1, MinSize: 10000, MaxSize: 10000})
	if err := src.SetFault("/res/*", Fault{Truncate: true}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(base + "/res/1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ContentLength != 10000 {
		t.Fatalf("Content-Length %d", resp.ContentLength)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) || n != 5000 {
		t.Fatalf("read %d bytes, error %v; want 5000 and unexpected EOF", n, err)
	}
}

// TestFaultSlow checks delays with a client that gives up first: a test
// that waited them out would be slow.
func TestFaultSlow(t *testing.T) {
	src, base := serve(t, Config{Resources: 1, MinSize: 8192, MaxSize: 8192})
	if err := src.SetFault("/res/1", Fault{Delay: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := src.SetFault(PathResourceList, Fault{Trickle: time.Minute}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/res/1", nil)
	if _, err := http.DefaultClient.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("delayed GET: %v, want the client's deadline", err)
	}

	ctx2, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	req, _ = http.NewRequestWithContext(ctx2, http.MethodGet, base+PathResourceList, nil)
	// Without gzip, so that the chunks on the wire are the document's own.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	t.Cleanup(client.CloseIdleConnections)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("trickled GET: headers should come at once: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if !errors.Is(err, context.DeadlineExceeded) || len(b) == 0 || len(b) > 1024 {
		t.Fatalf("trickled body: %d bytes, %v; want the first chunk then the deadline", len(b), err)
	}
}

func TestFaultNonChronological(t *testing.T) {
	src, base := serve(t, Config{Resources: 10})
	src.Update(5)
	if err := src.SetFault("/changelist-*.xml", Fault{NonChronological: true}); err != nil {
		t.Fatal(err)
	}
	cl := read(t, base+"/changelist-0.xml")
	if len(cl.Entries) != 5 {
		t.Fatalf("%d entries", len(cl.Entries))
	}
	if !cl.Entries[0].ChangeTime().After(cl.Entries[4].ChangeTime()) {
		t.Fatal("Change List is still in forward chronological order")
	}
}

func TestFaultExtraLoc(t *testing.T) {
	for _, loc := range []string{ForeignLoc, PrivateLoc} {
		src, base := serve(t, Config{Resources: 3})
		src.Update(1)
		for _, p := range []string{PathResourceList, "/changelist-0.xml"} {
			if err := src.SetFault(p, Fault{ExtraLoc: loc}); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, e := range read(t, base+p).Entries {
				found = found || e.Loc == loc
			}
			if !found {
				t.Errorf("%s has no entry for %s", p, loc)
			}
		}
	}
}

func TestFaultBadPattern(t *testing.T) {
	src, _ := serve(t, Config{})
	if err := src.SetFault("/res/[", Fault{Status: 500}); err == nil {
		t.Fatal("SetFault took a malformed pattern")
	}
}
