package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct/republish"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// notification is one payload ready to publish: the changes of a
// collection with from < time <= until, in the aggregator's order.
type notification struct {
	from, until time.Time
	entries     int
	payload     []byte
}

// nextUntil finds the end of the next notification of collection c after
// cursor: the time of the max-th change after it, or of the last one if
// there are fewer. ok is false when nothing changed after cursor.
func nextUntil(ctx context.Context, s *republish.Server, c string, cursor time.Time, max int) (until time.Time, ok bool, err error) {
	n := 0
	err = s.ChangeTimes(ctx, c, after(cursor), func(at time.Time) error {
		until, n = at, n+1
		if n >= max {
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return time.Time{}, false, fmt.Errorf("collection %s: changes after %s: %w", c, cursor.Format(time.RFC3339Nano), err)
	}
	return until, n > 0, nil
}

// errStop ends a walk of the change log early.
var errStop = errors.New("stop")

// after is the first change time that is after t: change times are
// whole microseconds, and the change log's from is inclusive.
func after(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Truncate(time.Microsecond).Add(time.Microsecond)
}

// buildNotification writes the payload of collection c for the changes
// with from < time <= until, each entry exactly as the Change Lists give
// it (the aggregator's URI and change time, its copy's hash, length and
// type, and the via link to the origin). label is the from it states:
// the first notification of a collection has no previous until, and
// states the whole second before its first change instead of the zero
// time.
func buildNotification(ctx context.Context, s *republish.Server, c string, from, until time.Time) (*notification, error) {
	label := from
	var buf bytes.Buffer
	var wr *resourcesync.Writer
	n := &notification{from: from, until: until}
	err := s.ChangeEntries(ctx, c, after(from), after(until), func(at time.Time, e *resourcesync.Entry) error {
		if wr == nil {
			if label.IsZero() {
				label = at.Add(-time.Microsecond).Truncate(time.Second)
				n.from = label
			}
			var err error
			wr, err = resourcesync.NewWriter(&buf, notificationHeader(label, until, s.CapabilityListURL(c)))
			if err != nil {
				return err
			}
		}
		n.entries++
		return wr.Write(e)
	})
	if err == nil && wr == nil {
		err = errors.New("no change in the interval")
	}
	if err == nil {
		err = wr.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("collection %s: notification of (%s, %s]: %w", c, from.Format(time.RFC3339Nano), until.Format(time.RFC3339Nano), err)
	}
	n.payload = buf.Bytes()
	return n, nil
}

// notificationHeader is the header EncodeNotification writes: a urlset
// with capability change-notification, from, until and a link up to the
// Capability List.
func notificationHeader(from, until time.Time, up string) *resourcesync.Header {
	return &resourcesync.Header{Root: resourcesync.URLSet,
		MD:    resourcesync.MD{Capability: resourcesync.CapChangeNotification, From: from, Until: until},
		Links: []resourcesync.Link{{Rel: "up", Href: up}}}
}
