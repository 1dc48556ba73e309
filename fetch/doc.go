// Package fetch holds the fetch workers: they take Changes from the CHANGES
// stream, GET each bitstream, stream it into the blob store while hashing,
// verify the hash and length the Source declared, and publish the resulting
// Event on EVENTS.
//
// A change is acknowledged only once its bitstream is stored and its event
// published; a copy whose bytes do not match what the Source declared is
// never published.
package fetch
