// Package queue owns NATS JetStream for viaduct: the embedded server or a
// connection to an external cluster, the CHANGES work queue, the EVENTS
// change log and the dead-letter stream, their subjects, and publishing with
// Nats-Msg-Id de-duplication.
//
// Nothing is dropped silently: a message that cannot be processed after its
// last delivery attempt goes to the dead-letter stream with its reason.
package queue
