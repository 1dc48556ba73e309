package notify

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/republish"
	"github.com/viaduct-mirror/viaduct/websub"
)

// NotifyMetrics are the numbers an operator watches to know that
// downstream Destinations are told of changes: payloads published per
// collection, deliveries by outcome, verified subscribers and what waits
// in the hub's queues. The node wraps the notifier's Publisher and the
// hub's HTTP client with it, so neither needs to know about Prometheus.
type NotifyMetrics struct {
	published  *prometheus.CounterVec // collection
	bytes      *prometheus.CounterVec // collection
	failed     *prometheus.CounterVec // collection
	deliveries *prometheus.CounterVec // result
	unreadable prometheus.Counter
}

// Delivery results counted in viaduct_notify_deliveries_total, the hub's
// own reading of a subscriber's answer.
const (
	DeliveryOK      = "ok"      // 2xx: taken
	DeliveryFailed  = "failed"  // 5xx, 408, 429, 3xx, no answer: retried
	DeliveryRefused = "refused" // other 4xx: dropped
	DeliveryGone    = "gone"    // 410: the subscription ends
)

// NewNotifyMetrics registers the notification metrics on reg (when not
// nil). subscribers and queued are read at each scrape: the number of
// verified subscriptions, and the notifications queued for delivery
// (an error leaves the gauge out of that scrape); either may be nil, as
// with an external hub.
func NewNotifyMetrics(reg prometheus.Registerer, subscribers func() int, queued func(context.Context) (uint64, error)) (*NotifyMetrics, error) {
	opts := func(name, help string) prometheus.CounterOpts {
		return prometheus.CounterOpts{Namespace: "viaduct", Subsystem: "notify", Name: name, Help: help}
	}
	m := &NotifyMetrics{
		published:  prometheus.NewCounterVec(opts("payloads_published_total", "Change notification payloads published, by collection."), []string{"collection"}),
		bytes:      prometheus.NewCounterVec(opts("payload_bytes_total", "Bytes of the change notification payloads published, by collection."), []string{"collection"}),
		failed:     prometheus.NewCounterVec(opts("publish_failures_total", "Publications that failed and will be retried, by collection."), []string{"collection"}),
		deliveries: prometheus.NewCounterVec(opts("deliveries_total", "Notifications POSTed to subscribers (or to the external hub), by result: ok, failed (retried), refused (dropped), gone."), []string{"result"}),
		unreadable: prometheus.NewCounter(opts("subscriptions_unreadable_total", "Entries of the shared hub subscriptions (bucket viaduct_hub) this node's hub could not read and passed over: nothing is delivered for them.")),
	}
	for _, r := range []string{DeliveryOK, DeliveryFailed, DeliveryRefused, DeliveryGone} {
		m.deliveries.WithLabelValues(r)
	}
	if reg == nil {
		return m, nil
	}
	cs := []prometheus.Collector{m.published, m.bytes, m.failed, m.deliveries, m.unreadable}
	if subscribers != nil {
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "viaduct", Subsystem: "notify", Name: "subscribers",
			Help: "Verified subscriptions to the hub's topics."}, func() float64 { return float64(subscribers()) }))
	}
	if queued != nil {
		cs = append(cs, &queueCollector{queued: queued, desc: prometheus.NewDesc("viaduct_notify_queued",
			"Notifications queued for delivery to subscribers, all subscribers together.", nil, nil)})
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// queueCollector reads the queue depth at scrape time; a failed read
// reports the last depth read, so the series never vanishes in an outage.
type queueCollector struct {
	queued func(context.Context) (uint64, error)
	desc   *prometheus.Desc
	last   atomic.Uint64
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := c.queued(ctx)
	if err != nil {
		// NATS away: the last depth read, rather than no series at all
		// (viaduct_queue_connected says the figure is stale).
		n = c.last.Load()
	}
	c.last.Store(n)
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n))
}

// Publisher returns pub counting what it publishes for s's collections,
// those added later included.
func (m *NotifyMetrics) Publisher(s *republish.Server, pub websub.Publisher) websub.Publisher {
	return &countingPublisher{m: m, pub: pub, s: s}
}

type countingPublisher struct {
	m   *NotifyMetrics
	pub websub.Publisher
	s   *republish.Server
}

var _ websub.Publisher = (*countingPublisher)(nil)

func (p *countingPublisher) Publish(ctx context.Context, topic string, payload []byte) error {
	c := p.s.TopicCollection(topic)
	if err := p.pub.Publish(ctx, topic, payload); err != nil {
		p.m.failed.WithLabelValues(c).Inc()
		return err
	}
	p.m.published.WithLabelValues(c).Inc()
	p.m.bytes.WithLabelValues(c).Add(float64(len(payload)))
	return nil
}

// Client returns a copy of c whose POSTs (the hub's deliveries) are
// counted by result. Verification GETs are not counted.
func (m *NotifyMetrics) Client(c *http.Client) *http.Client {
	out := *c
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	out.Transport = &countingTransport{m: m, rt: rt}
	return &out
}

type countingTransport struct {
	m  *NotifyMetrics
	rt http.RoundTripper
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if r.Method != http.MethodPost {
		return resp, err
	}
	t.m.deliveries.WithLabelValues(deliveryResult(resp, err)).Inc()
	return resp, err
}

// deliveryResult reads an answer as the hub does.
func deliveryResult(resp *http.Response, err error) string {
	if err != nil {
		return DeliveryFailed
	}
	switch c := resp.StatusCode; {
	case c/100 == 2:
		return DeliveryOK
	case c == http.StatusGone:
		return DeliveryGone
	case c/100 == 4 && c != http.StatusRequestTimeout && c != http.StatusTooManyRequests:
		return DeliveryRefused
	}
	return DeliveryFailed
}
