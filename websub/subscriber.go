package websub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// SubscriberConfig is how viaduct subscribes to upstream hubs.
type SubscriberConfig struct {
	// CallbackBase is the public URL under which the Subscriber's Handler
	// is reachable, ending in "/": each subscription's callback is
	// CallbackBase + its ID. Required.
	CallbackBase string `yaml:"callback_base"`
	// Lease is the lease asked for; the hub decides. Default 10 days.
	Lease time.Duration `yaml:"lease"`
	// RetryMin and RetryMax bound the backoff between subscription
	// attempts that failed or were not verified. Defaults 30 s and 1 h.
	RetryMin time.Duration `yaml:"retry_min"`
	RetryMax time.Duration `yaml:"retry_max"`
	// RequestTimeout bounds one request to a hub. Default 30 s.
	RequestTimeout time.Duration `yaml:"request_timeout"`
	// MaxEntries and MaxBytes bound one notification: a notification is
	// read whole before it is handed on. Defaults 10,000 and 16 MiB.
	MaxEntries int   `yaml:"max_entries"`
	MaxBytes   int64 `yaml:"max_bytes"`
}

// SubscriberOptions are what a Subscriber is built from besides its Config.
type SubscriberOptions struct {
	// Client makes the requests to hubs; default one that never follows
	// redirects.
	Client *http.Client
	Clock  Clock        // default SystemClock
	Logger *slog.Logger // default: discard
}

// NotifyFunc takes a verified change notification: its header (from,
// until, links) and its entries in document order. The Subscriber answers
// the hub 2xx only once it returned nil, so an error makes the hub retry.
type NotifyFunc func(ctx context.Context, sub Sub, h *resourcesync.Header, entries []*resourcesync.Entry) error

// State is where a subscription stands.
type State string

const (
	Pending       State = "pending"       // asked for, not verified yet
	Active        State = "active"        // verified, lease running
	Denied        State = "denied"        // the hub said no; asked again later
	Unsubscribing State = "unsubscribing" // unsubscribe asked for
)

// Sub is the Subscriber's view of one subscription.
type Sub struct {
	ID       string
	Hub      string
	Topic    string
	Callback string
	State    State
	// Lease and Expires are what the hub granted at its last verification.
	Lease   time.Duration
	Expires time.Time
	// Tolerated counts, by kind, the notifications taken although they
	// departed from the spec (resourcesync.Warning kinds and
	// WarnChangeListPayload), for the status page.
	Tolerated map[resourcesync.WarningKind]int
}

// Subscriber subscribes to hubs, answers their verifications, renews
// leases before they end, and checks the notifications it receives before
// handing them to a NotifyFunc. Its renewal goroutine is stopped by Close.
type Subscriber struct {
	cfg    SubscriberConfig
	client *http.Client
	clock  Clock
	log    *slog.Logger
	notify NotifyFunc

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	kick   chan struct{}

	mu   sync.Mutex
	subs map[string]*subEntry
}

var _ http.Handler = (*Subscriber)(nil)

// subEntry is a subscription with what only the Subscriber knows.
type subEntry struct {
	Sub
	secret  string
	renewAt time.Time // next subscribe request (or, unsubscribing, when to forget); zero: none
	retry   time.Duration
	// asked: a subscribe request was sent and the hub has not answered it
	// with a verification yet. Only then may a denial change the state,
	// since a denial carries no secret: anyone who learns the callback
	// URL could send one.
	asked bool
}

// NewSubscriber starts a Subscriber that hands notifications to notify.
func NewSubscriber(cfg SubscriberConfig, opts SubscriberOptions, notify NotifyFunc) (*Subscriber, error) {
	if u, ok := httpURL(cfg.CallbackBase); !ok || !strings.HasSuffix(u.Path, "/") {
		return nil, fmt.Errorf("websub subscriber config: callback_base %q is not an absolute http(s) URL ending in /", cfg.CallbackBase)
	}
	if notify == nil {
		return nil, errors.New("websub subscriber: a NotifyFunc is required")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.Lease, DefaultLease)
	def(&cfg.RetryMin, 30*time.Second)
	def(&cfg.RetryMax, time.Hour)
	def(&cfg.RequestTimeout, 30*time.Second)
	if cfg.RetryMax < cfg.RetryMin {
		return nil, fmt.Errorf("websub subscriber config: retry_max %v is less than retry_min %v", cfg.RetryMax, cfg.RetryMin)
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = 10000
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 16 << 20
	}
	s := &Subscriber{cfg: cfg, client: opts.Client, clock: opts.Clock, log: opts.Logger, notify: notify,
		done: make(chan struct{}), kick: make(chan struct{}, 1), subs: map[string]*subEntry{}}
	if s.client == nil {
		s.client = noRedirectClient()
	}
	if s.clock == nil {
		s.clock = SystemClock{}
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	go s.loop()
	return s, nil
}

// Close stops renewals. Subscriptions are not ended: their leases run out.
func (s *Subscriber) Close() error {
	s.cancel()
	<-s.done
	return nil
}

// Subscribe asks hub for a subscription to topic, with a fresh callback
// and secret, and returns it Pending: it becomes Active when the hub
// verifies it, and is renewed from then on. A request the hub refuses is
// an error and leaves nothing behind.
func (s *Subscriber) Subscribe(ctx context.Context, hub, topic string) (Sub, error) {
	return s.SubscribeAs(ctx, hub, topic, NewCallbackID(), NewSecret())
}

// Unsubscribe asks the hub to end subscription id; the subscription is
// forgotten once the hub verifies it. Notifications arriving meanwhile are
// answered 410 Gone.
func (s *Subscriber) Unsubscribe(ctx context.Context, id string) error {
	s.mu.Lock()
	e, ok := s.subs[id]
	if ok {
		e.State = Unsubscribing
		e.renewAt = s.clock.Now().Add(s.cfg.RetryMax)
	}
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("unsubscribing %s: no such subscription", id)
	}
	return s.request(ctx, e, "unsubscribe")
}

// Get returns subscription id.
func (s *Subscriber) Get(id string) (Sub, bool) {
	sub, err := s.get(id)
	return sub, err == nil
}

func (s *Subscriber) get(id string) (Sub, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.subs[id]
	if !ok {
		return Sub{}, fmt.Errorf("subscription %s is gone", id)
	}
	sub := e.Sub
	sub.Tolerated = maps.Clone(e.Tolerated)
	return sub, nil
}

// request sends a subscribe or unsubscribe request for e to its hub.
func (s *Subscriber) request(ctx context.Context, e *subEntry, mode string) error {
	form := url.Values{"hub.mode": {mode}, "hub.topic": {e.Topic}, "hub.callback": {e.Callback}}
	if mode == "subscribe" {
		form.Set("hub.secret", e.secret)
		form.Set("hub.lease_seconds", strconv.FormatInt(int64(s.cfg.Lease/time.Second), 10))
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.Hub, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("%s %s at hub %s: %w", mode, e.Topic, e.Hub, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if mode == "subscribe" {
		s.mu.Lock()
		e.asked = true
		s.mu.Unlock()
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s at hub %s: %w", mode, e.Topic, e.Hub, err)
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s at hub %s: answered %s: %s", mode, e.Topic, e.Hub, resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}
