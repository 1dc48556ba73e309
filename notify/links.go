package node

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/viaduct-mirror/viaduct/websub"
)

// linkBook keeps, per collection, the span contexts of the events the
// applier has written since that collection's topic was last published:
// the changes the next notification tells subscribers of. The notifier
// reads the catalog, which keeps no trace context, so the book is how a
// hub delivery's span links to the changes it notifies. It keeps at most
// websub.MaxLinks per collection, the first ones.
type linkBook struct {
	mu    sync.Mutex
	links map[string][]trace.SpanContext
}

func newLinkBook() *linkBook { return &linkBook{links: map[string][]trace.SpanContext{}} }

// Add records an applied event of collection.
func (b *linkBook) Add(collection string, sc trace.SpanContext) {
	if b == nil || !sc.IsValid() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.links[collection]) < websub.MaxLinks {
		b.links[collection] = append(b.links[collection], sc)
	}
}

// take returns and forgets what was recorded for collection.
func (b *linkBook) take(collection string) []trace.SpanContext {
	b.mu.Lock()
	defer b.mu.Unlock()
	ls := b.links[collection]
	delete(b.links, collection)
	return ls
}

// linkingPublisher hands the hub, with each publication, the changes it
// notifies (see linkBook).
type linkingPublisher struct {
	next websub.Publisher
	book *linkBook
	// collection is the collection whose topic a topic is, for those
	// added by a reload too.
	collection func(topic string) string
}

var _ websub.Publisher = (*linkingPublisher)(nil)

func newLinkingPublisher(next websub.Publisher, book *linkBook, collection func(topic string) string) *linkingPublisher {
	return &linkingPublisher{next: next, book: book, collection: collection}
}

func (p *linkingPublisher) Publish(ctx context.Context, topic string, payload []byte) error {
	links := p.book.take(p.collection(topic))
	err := p.next.Publish(websub.WithLinks(ctx, links...), topic, payload)
	if err != nil {
		// Published again later: keep the links for that publication.
		for _, sc := range links {
			p.book.Add(p.collection(topic), sc)
		}
	}
	return err
}
