// Package queue owns NATS JetStream for viaduct: the embedded server or a
// connection to an external cluster, the CHANGES work queue, the EVENTS
// change log and the dead-letter stream, their subjects, and publishing
// (changes with Nats-Msg-Id de-duplication).
//
// Streams and subjects:
//
//   - CHANGES (work queue, changes.<source>): one message per upstream
//     change. All fetch workers, on every node, share one durable pull
//     consumer; a change is removed once acked or dead-lettered. A full
//     store refuses new changes rather than dropping queued ones.
//   - EVENTS (limits, events.<collection>): the aggregator's change log.
//     Its sequence is the global order of changes and its timestamp the
//     change time; every node's applier reads it in order.
//   - DEADLETTER (limits, dead.changes.<source>): the original payload,
//     with the reason, evidence and origin in Viaduct-* headers. An
//     operator lists, shows, retries (queues the change again, counting
//     the retry in Viaduct-Retries) and purges them, one, a Source's or
//     all (deadletter_ops.go).
//   - HUBOUT (hubout.<subscription id>): the hub's delivery queue of each
//     downstream subscriber (hubout.go declares the stream; package
//     notify reads and writes it as the hub's outbox).
//
// KV buckets hold what nodes share besides the streams: viaduct_leases
// (one lease per live node, one per Source, one each for the duties a
// single node does: "notify", and "gc" and the fixity audit of each
// blob store, taken through Turn), viaduct_positions (each Source's
// harvest position, written only by the holder of its lease) and
// viaduct_hub (the hub's subscriptions and the notifier's cursor).
//
// Source and collection names become one subject token through
// EncodeToken, which is reversible; the payload also carries them.
//
// Messages are JSON: a change as viaduct.Change.Encode writes it, an event
// as viaduct.Event.Encode writes it (both with encoding/json, read back
// with goccy/go-json, which is faster at it; see package viaduct), leaving
// out what the event's upstream change repeats of the event; hashes are
// strings in the form of a document's hash attribute, "md5:… sha-256:…".
// Messages written before either form (hashes as arrays of objects, events
// written whole) still decode. A change's Nats-Msg-Id is its MsgID (a
// group's, a digest of its changes' ids), so a change published twice
// within the duplicate window is stored once. Events carry no id: an event
// published again is stored again and the catalog absorbs it (docs/design.md).
// Trace context travels in the message headers (W3C traceparent by
// default).
//
// The contract with workers: ack only once the effect is durable; Nak to
// retry; on the last attempt (ChangeMsg.LastAttempt) dead-letter instead of
// failing again. A change that runs out of deliveries anyway (the worker
// crashed on its last attempt) is dead-lettered by the queue itself, and a
// change that does not decode is dead-lettered when it is fetched.
//
// Nothing is dropped silently: this package never acks what it did not
// process, never deletes from CHANGES what it has not dead-lettered first,
// and reports a gap in EVENTS (ErrEventsGap) instead of skipping it.
package queue
