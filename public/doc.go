// Package public hardens the listener that Destinations reach: the
// republished Source, its hub and the callbacks of upstream notifications.
// It bounds the connections open in total and per client, replaces silent
// connections rather than refusing new ones, cuts off bodies that never
// come and readers that stop reading, and serves at most max_expensive
// catalog scans and dump downloads at once, answering 503 with
// Retry-After beyond (docs/security.md, "Slow and stalled peers").
//
// It owns no route: what is expensive is asked of the republisher, whose
// URL layout it is. It never reads a request's body or holds a response.
package public
