// Package resourcesync reads, writes and validates the documents of the
// ResourceSync Framework (ANSI/NISO Z39.99-2014) and of the ResourceSync
// Change Notification specification: Source Descriptions, Capability Lists,
// Resource and Change Lists and their Indexes, Dumps and their Manifests, and
// notification payloads, in both the 1.0 and 1.1 time forms.
//
// Reading and writing stream one entry at a time, so a document of millions
// of entries never sits whole in memory, and every input is bounded by
// Limits. The Reader reads what real Sources write where the meaning is
// plain (times without a zone, digests in base64, relative URIs, the 0.9
// draft's names...) and says so in its Warnings, one per kind and
// document; the validator reports those as warnings, so that a document
// has one verdict whoever reads it. The package does no network I/O and knows nothing of viaduct; other
// Go programs can import it on its own.
package resourcesync
