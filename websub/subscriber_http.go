package websub

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path"
	"strconv"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// ErrNotNotification is wrapped by the error for a payload that is not a
// change notification urlset with from and until.
var ErrNotNotification = errors.New("not a change notification")

// ServeHTTP is the callback of every subscription, told apart by the last
// path segment: GET is a hub's verification of intent, POST a
// notification.
func (s *Subscriber) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := path.Base(r.URL.Path)
	switch r.Method {
	case http.MethodGet:
		s.serveVerification(w, r, id)
	case http.MethodPost:
		s.serveNotification(w, r, id)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// serveVerification echoes the challenge only for a request the
// Subscriber made: the subscription exists, the topic is its topic, and
// the mode is what it asked for. Anything else is 404.
func (s *Subscriber) serveVerification(w http.ResponseWriter, r *http.Request, id string) {
	q := r.URL.Query()
	mode, topic, challenge := q.Get("hub.mode"), q.Get("hub.topic"), q.Get("hub.challenge")
	s.mu.Lock()
	e, ok := s.subs[id]
	if !ok || e.Topic != topic {
		s.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	now := s.clock.Now()
	switch {
	case mode == "subscribe" && e.State != Unsubscribing && challenge != "":
		secs, err := strconv.ParseInt(q.Get("hub.lease_seconds"), 10, 64)
		if err != nil || secs <= 0 {
			s.mu.Unlock()
			http.NotFound(w, r)
			return
		}
		e.State, e.Lease, e.asked = Active, time.Duration(secs)*time.Second, false
		e.Expires = now.Add(e.Lease)
		e.renewAt = now.Add(e.Lease * 4 / 5)
		e.retry = s.cfg.RetryMin
		s.log.Info("websub subscriber: subscription verified", "topic", e.Topic, "hub", e.Hub, "lease", e.Lease)
	case mode == "unsubscribe" && e.State == Unsubscribing && challenge != "":
		delete(s.subs, id)
		s.log.Info("websub subscriber: unsubscribed", "topic", e.Topic, "hub", e.Hub)
	case mode == "denied" && e.State != Unsubscribing && e.asked:
		e.State, e.asked = Denied, false
		e.renewAt = now.Add(s.cfg.RetryMax)
		s.log.Warn("websub subscriber: hub denied the subscription", "topic", e.Topic, "hub", e.Hub, "reason", q.Get("hub.reason"))
	case mode == "denied" && e.State != Unsubscribing:
		// A denial no request of ours asked for may not come from the
		// hub: the state stays, and the hub is asked again at once; if it
		// does deny, it answers that request.
		e.renewAt = now
		s.log.Warn("websub subscriber: denial without a request outstanding, not trusted; asking the hub again", "topic", e.Topic, "hub", e.Hub, "reason", q.Get("hub.reason"))
	default:
		s.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	s.mu.Unlock()
	s.wake()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, challenge)
}

// serveNotification checks a notification and hands it on: 410 for a
// callback that is no longer subscribed, 403 for a missing or wrong
// signature, 400 for a wrong topic or a payload that is not a change
// notification, 413 past the limits, 503 when the NotifyFunc failed, 204
// once it succeeded.
func (s *Subscriber) serveNotification(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	e, ok := s.subs[id]
	var sub Sub
	var secret string
	if ok {
		sub, secret = e.Sub, e.secret
		sub.Tolerated = maps.Clone(e.Tolerated)
	}
	s.mu.Unlock()
	if !ok || sub.State == Unsubscribing {
		http.Error(w, "not subscribed", http.StatusGone)
		return
	}
	reject := func(status int, err error) {
		s.log.Warn("websub subscriber: notification rejected", "topic", sub.Topic, "hub", sub.Hub, "status", status, "err", err)
		http.Error(w, err.Error(), status)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.MaxBytes+1))
	if err != nil {
		reject(http.StatusBadRequest, fmt.Errorf("reading the notification: %w", err))
		return
	}
	if int64(len(body)) > s.cfg.MaxBytes {
		reject(http.StatusRequestEntityTooLarge, fmt.Errorf("notification is larger than %d bytes", s.cfg.MaxBytes))
		return
	}
	if err := VerifySignature(secret, body, r.Header.Get(SignatureHeader)); err != nil {
		reject(http.StatusForbidden, err)
		return
	}
	if self, _ := selfAndHub(r.Header.Values("Link")); self != "" && self != sub.Topic {
		reject(http.StatusBadRequest, fmt.Errorf("notification is for topic %s, subscribed to %s", self, sub.Topic))
		return
	}
	hd, entries, warns, err := s.parse(body)
	if err != nil {
		status := http.StatusBadRequest
		if re := (*resourcesync.Error)(nil); errors.As(err, &re) && re.Limit != "" {
			status = http.StatusRequestEntityTooLarge
		}
		reject(status, err)
		return
	}
	if err := s.notify(r.Context(), sub, hd, entries); err != nil {
		s.log.Error("websub subscriber: handling a notification", "topic", sub.Topic, "hub", sub.Hub, "err", err)
		http.Error(w, "notification not taken; retry", http.StatusServiceUnavailable)
		return
	}
	s.tolerated(id, warns)
	w.WriteHeader(http.StatusNoContent)
}

// parse reads a whole notification payload. Any bad entry rejects it all:
// handing on part of a notification would leave its interval half-covered.
// It returns what the payload needed tolerated: the reader's warnings, and
// a payload posted as a Change List (see WarnChangeListPayload).
func (s *Subscriber) parse(body []byte) (*resourcesync.Header, []*resourcesync.Entry, []resourcesync.Warning, error) {
	lim := resourcesync.DefaultLimits()
	lim.MaxBytes, lim.MaxDecompressed, lim.MaxEntries = s.cfg.MaxBytes, s.cfg.MaxBytes, s.cfg.MaxEntries
	rd, err := resourcesync.NewReader(bytes.NewReader(body), lim)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading the notification: %w", err)
	}
	hd := rd.Header()
	var own []resourcesync.Warning
	switch k := hd.Kind(); k {
	case resourcesync.KindChangeNotification:
	case resourcesync.KindChangeList:
		// Only on a callback the Subscriber subscribed, signed with its
		// secret: what else the hub of that topic sends is its changes.
		hd.MD.Capability = resourcesync.CapChangeNotification
		own = append(own, resourcesync.Warning{Kind: WarnChangeListPayload, Count: 1,
			Msg: `notification posted with capability="changelist": read as a Change Notification`})
	default:
		return nil, nil, nil, fmt.Errorf("%w: the payload is a %s", ErrNotNotification, k)
	}
	if hd.MD.From.IsZero() || hd.MD.Until.IsZero() || hd.MD.Until.Before(hd.MD.From) {
		return nil, nil, nil, fmt.Errorf("%w: from %v and until %v are not an interval", ErrNotNotification, hd.MD.From, hd.MD.Until)
	}
	var entries []*resourcesync.Entry
	for {
		e, err := rd.Next()
		if err == io.EOF {
			return hd, entries, append(own, rd.Warnings()...), nil
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("reading the notification: %w", err)
		}
		entries = append(entries, e)
	}
}
