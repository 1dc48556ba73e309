// Package harvester finds upstream ResourceSync Sources, walks their
// Source Descriptions, Capability Lists and capability documents, and turns
// what it reads into Changes on the CHANGES stream: baselines from Resource
// Lists, increments from Change Lists, pushes from change notifications.
// It reads what real producers write (every Capability List of a Source,
// lists out of order, paged lists, Change Lists only) and counts what it
// tolerates; it never moves a cursor across a window of changes nobody
// read (gap.go).
//
// Its cursors are the Source's own times, never the local clock. It must
// never fetch outside what the operator allowed: the Source's URI authority,
// http and https only, no loopback or private addresses unless configured.
package harvester
