package node

import (
	"context"
	"fmt"
	"net/http"

	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/websub"
)

// PathCallbacks is where the node answers the upstream hubs: every
// subscription's callback is PathCallbacks + its ID, under the node's
// public URL.
const PathCallbacks = "/websub/callback/"

// startPush makes the harvester receive change notifications at the
// node's public URL, ends the subscriptions of Sources removed from the
// configuration since the last start, and records the configured ones.
func startPush(ctx context.Context, n *Node, harv *harvester.Harvester) (*harvester.Push, error) {
	push, err := harv.StartPush(ctx, n.url+PathCallbacks, websub.SubscriberOptions{Logger: n.log.With("role", "push")})
	if err != nil {
		return nil, fmt.Errorf("starting change notification subscriber: %w", err)
	}
	if err := push.Reconcile(ctx, n.cat); err != nil {
		push.Close()
		return nil, err
	}
	return push, nil
}

// mountPush serves the subscriptions' callbacks: GET for the hubs'
// verifications of intent, POST for notifications.
func mountPush(mux *http.ServeMux, push *harvester.Push) {
	if push != nil {
		mux.Handle(PathCallbacks, push)
	}
}

// closePush stops the subscriber; its subscriptions are renewed by the
// next start.
func closePush(push *harvester.Push) error {
	if push == nil {
		return nil
	}
	return push.Close()
}
