// Package notify tells downstream Destinations of the aggregator's
// changes: it turns the change log into ResourceSync change notifications
// and delivers them through viaduct's own WebSub hub (or an external one).
//
// Read it in the order the data goes:
//
//   - start.go: Start assembles everything below for a node, from Deps.
//   - lead.go: one node at a time (the holder of the "notify" lease, once
//     its catalog has caught up with EVENTS) publishes and delivers; the
//     others take subscriptions and keep their hub in line with the
//     shared store. The notifier's cursors are shared (SharedState).
//   - notifier.go, payload.go: the Notifier reads each collection's
//     changes after its cursor from the catalog, through the republisher,
//     and publishes them in payloads covering consecutive, non-overlapping
//     (from, until] intervals, each entry exactly as the Change Lists give
//     it. A payload's interval is recorded as pending before it is
//     published, so a crash publishes the same bytes again, never an
//     overlapping interval.
//   - links.go: the trace contexts of applied events ride with the
//     payload that tells of them, to the hub's deliveries.
//   - subscriptions.go, catalogstore.go: the hub's subscriptions, shared
//     by every node in the KV bucket viaduct_hub (the catalog's copy is
//     read once, to carry over what earlier versions kept there).
//   - follow.go: each node's hub follows that bucket by watching it,
//     applying puts and deletes in revision order, so that no replica
//     that lags can make a hub forget a subscription.
//   - outbox.go, outbox_links.go: each subscriber's queue of deliveries
//     in the JetStream stream HUBOUT, which package queue declares.
//   - client.go, metrics.go, status.go: the hub's confined HTTP client,
//     the viaduct_notify_* metrics and the operator's view of subscribers.
//
// The topic URLs and their advertisement in the Capability Lists are the
// republisher's URL layout (republish/notify_topic.go), as is the
// configuration, republish.notify (republish.NotifyConfig). The WebSub
// protocol itself, hub and subscriber, is the library package websub.
//
// It must never move a cursor past a payload that was not handed to the
// hub, nor publish two payloads whose intervals overlap.
package notify
