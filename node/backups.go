package node

import (
	"github.com/viaduct-mirror/viaduct/backup"
)

// backupServer answers the admin's POST /admin/backup (package backup
// takes and sends it).
func (n *Node) backupServer() *backup.Server {
	return &backup.Server{Node: backup.Node{Catalog: n.cat, Queue: n.q, Embedded: n.cfg.Queue.Embedded(),
		Version: n.version, Blobs: n.blobsWhere()}, Spool: n.cfg.DataDir, Log: n.log}
}

// blobsWhere names the node's blob store, as a backup's manifest records it.
func (n *Node) blobsWhere() string {
	if n.cfg.Blobs.Kind == "s3" {
		return "s3 " + n.cfg.Blobs.S3.Endpoint + "/" + n.cfg.Blobs.S3.Bucket
	}
	return n.cfg.Blobs.Kind + " " + n.cfg.Blobs.Dir
}

// RestoreTarget is where a backup is restored for cfg, which Load or
// Fill has filled.
func RestoreTarget(cfg Config) backup.Target {
	t := backup.Target{DataDir: cfg.DataDir, CatalogPath: cfg.Catalog.Path, Queue: cfg.Queue}
	if cfg.Blobs.Kind == "dir" {
		t.BlobDir = cfg.Blobs.Dir
	}
	return t
}
