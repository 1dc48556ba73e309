package notify

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/viaduct-mirror/viaduct/websub"
)

// LinkBook keeps, per collection, the span contexts of the events the
// applier has written since that collection's topic was last published:
// the changes the next notification tells subscribers of. The notifier
// reads the catalog, which keeps no trace context, so the book is how a
// hub delivery's span links to the changes it notifies. It keeps at most
// websub.MaxLinks per collection, the first ones.
type LinkBook struct {
	mu    sync.Mutex
	links map[string][]trace.SpanContext
}

// NewLinkBook returns an empty book.
func NewLinkBook() *LinkBook { return &LinkBook{links: map[string][]trace.SpanContext{}} }

// Add records an applied event of collection.
func (b *LinkBook) Add(collection string, sc trace.SpanContext) {
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
func (b *LinkBook) take(collection string) []trace.SpanContext {
	b.mu.Lock()
	defer b.mu.Unlock()
	ls := b.links[collection]
	delete(b.links, collection)
	return ls
}

// linkingPublisher hands the hub, with each publication, the changes it
// notifies (see LinkBook).
type linkingPublisher struct {
	next websub.Publisher
	book *LinkBook
	// collection is the collection whose topic a topic is, for those
	// added by a reload too.
	collection func(topic string) string
}

var _ websub.Publisher = (*linkingPublisher)(nil)

func newLinkingPublisher(next websub.Publisher, book *LinkBook, collection func(topic string) string) *linkingPublisher {
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
