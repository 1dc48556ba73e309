// Package upstream is the only way viaduct talks to upstream hosts: the
// harvester reads documents and the fetch workers read bitstreams through
// its Client, so that every request is confined and polite in one place.
//
// Confined: a Policy per Source says which URIs the Source may make viaduct
// fetch. Only http and https; by default only the authority (scheme, host,
// port) of the Source's base URI plus the mirrors the operator listed; every
// redirect hop is checked again; and the addresses a host name resolves to
// are checked when the connection is dialled, so a name that resolves to a
// loopback, private, link-local, unspecified or multicast address is refused
// unless the operator allowed it (this also defeats DNS rebinding). Proxies
// from the environment are never used, since they would hide the address.
//
// Polite: a User-Agent naming viaduct, a bounded number of concurrent
// requests and a request rate per host, bounded retries with exponential
// backoff and full jitter, and Retry-After honoured.
//
// Bounded: every body is capped (after gzip decoding); a body larger than
// the cap is an error, never silently truncated, and a body shorter than its
// Content-Length is reported as truncated.
//
// The package must never change http.DefaultTransport, never follow a
// redirect it has not checked, and never keep state other than connection
// pools and per-host limits, all owned by a Client and released by Close.
package upstream
