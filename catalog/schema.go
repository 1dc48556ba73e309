package catalog

// schemaV1 is the first schema. Aggregator times are INTEGER microseconds
// since the Unix epoch (UTC), which orders and compares cheaply; upstream
// times are TEXT in RFC 3339 with nanoseconds, empty when absent, so that a
// Source's time of any year or precision comes back exactly as read.
const schemaV1 = `
-- applied holds the stream sequence of the last applied EVENTS message.
CREATE TABLE applied (
	id  INTEGER PRIMARY KEY CHECK (id = 1),
	seq INTEGER NOT NULL
);
INSERT INTO applied (id, seq) VALUES (1, 0);

-- collections keeps per-collection totals up to date with every change, so
-- that counts and the change log's bounds never need a scan.
CREATE TABLE collections (
	name      TEXT PRIMARY KEY,
	first_at  INTEGER,
	last_at   INTEGER,
	resources INTEGER NOT NULL DEFAULT 0,
	bytes     INTEGER NOT NULL DEFAULT 0,
	changes   INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- resources is one row per resource ever held; deleted ones stay, marked,
-- with the hashes of the last copy held.
CREATE TABLE resources (
	collection  TEXT NOT NULL REFERENCES collections (name),
	uri         TEXT NOT NULL,
	source      TEXT NOT NULL,
	deleted     INTEGER NOT NULL DEFAULT 0,
	sha256      TEXT NOT NULL,
	md5         TEXT NOT NULL,
	length      INTEGER NOT NULL,
	type        TEXT NOT NULL,
	changed     INTEGER NOT NULL,
	seq         INTEGER NOT NULL,
	origin      TEXT NOT NULL,
	up_time     TEXT NOT NULL,
	up_modified TEXT NOT NULL,
	up_hash     TEXT NOT NULL,
	up_length   INTEGER,
	up_type     TEXT NOT NULL,
	links       TEXT,
	hops        TEXT NOT NULL,
	PRIMARY KEY (collection, uri)
) WITHOUT ROWID;
CREATE INDEX resources_source ON resources (source, collection, uri);
CREATE INDEX resources_uri ON resources (uri);
CREATE INDEX resources_origin ON resources (origin);
CREATE INDEX resources_sha256 ON resources (source, sha256);
CREATE INDEX resources_md5 ON resources (source, md5);

-- changes is the aggregator's change log: one row per change it made,
-- keyed by the EVENTS sequence. at is the adjusted change time.
CREATE TABLE changes (
	seq        INTEGER PRIMARY KEY,
	collection TEXT NOT NULL REFERENCES collections (name),
	uri        TEXT NOT NULL,
	op         TEXT NOT NULL CHECK (op IN ('created', 'updated', 'deleted')),
	at         INTEGER NOT NULL,
	received   INTEGER NOT NULL,
	sha256     TEXT NOT NULL,
	md5        TEXT NOT NULL,
	length     INTEGER NOT NULL,
	type       TEXT NOT NULL,
	UNIQUE (collection, at)
);
CREATE INDEX changes_collection_seq ON changes (collection, seq);

CREATE TABLE sources (
	name       TEXT PRIMARY KEY,
	base_uri   TEXT NOT NULL,
	collection TEXT NOT NULL,
	added      INTEGER NOT NULL,
	removed    INTEGER
) WITHOUT ROWID;

CREATE TABLE cursors (
	source TEXT NOT NULL,
	name   TEXT NOT NULL,
	value  TEXT NOT NULL,
	PRIMARY KEY (source, name)
) WITHOUT ROWID;

CREATE TABLE kv (
	key   TEXT PRIMARY KEY,
	value BLOB NOT NULL
) WITHOUT ROWID;
`
