// Package websub carries ResourceSync Change Notifications over WebSub, both
// ways: a Hub that Destinations downstream of viaduct subscribe to, and a
// Subscriber that subscribes viaduct to upstream Sources' hubs.
//
// The Hub owns subscriptions (subscribe and unsubscribe with verification of
// intent, leases, secrets) and deliveries (signed POSTs, in order per
// subscriber, retried with backoff until the lease ends). It keeps both
// behind small interfaces, Store and Outbox, so that they can live in the
// catalog and on NATS and survive restarts. The Subscriber owns its
// subscriptions' secrets, answers its hubs' verifications, renews leases and
// checks every notification (signature, topic, payload) before handing it
// to its caller. Tracker tells the caller when consecutive notifications do
// not cover consecutive intervals, so that it catches up from the Change
// List.
//
// The package must never call back a URL its CallbackPolicy refuses, never
// follow a redirect from a callback, never hand on a notification whose
// signature it could not check, and never keep a goroutine that a Close does
// not stop. It knows nothing of the catalog, NATS or the harvester.
package websub
