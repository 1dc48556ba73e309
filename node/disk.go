package node

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/admin"
)

// diskDirs are the directories whose file systems the node fills: the
// data directory (JetStream store, catalog, document cache) and, for the
// directory store, the blobs. An S3 store's space is the S3 server's to
// report.
func (n *Node) diskDirs() map[string]string {
	dirs := map[string]string{"data_dir": n.cfg.DataDir}
	if n.cfg.Blobs.Kind != "s3" {
		dirs["blobs"] = n.cfg.Blobs.Dir
	}
	return dirs
}

// diskGauges are viaduct_disk_free_bytes and viaduct_disk_size_bytes of
// each of diskDirs, read at each scrape: a full disk stops ingest (the
// fetch workers park their changes, JetStream refuses writes), so the
// alert must come while it fills. NaN when the file system cannot be read.
func (n *Node) diskGauges() []prometheus.Collector {
	var cs []prometheus.Collector
	for name, dir := range n.diskDirs() {
		read := func(size bool) func() float64 {
			return func() float64 {
				free, total, err := freeSpace(dir)
				switch {
				case err != nil:
					return math.NaN()
				case size:
					return float64(total)
				}
				return float64(free)
			}
		}
		labels := prometheus.Labels{"dir": name}
		cs = append(cs,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "viaduct_disk_free_bytes", ConstLabels: labels,
				Help: "Bytes an unprivileged writer may still write on the file system of the data directory (dir=\"data_dir\") or of the blob directory (dir=\"blobs\", directory store only)."}, read(false)),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "viaduct_disk_size_bytes", ConstLabels: labels,
				Help: "Size of the file system of the data directory (dir=\"data_dir\") or of the blob directory (dir=\"blobs\")."}, read(true)))
	}
	return cs
}

// diskInfo is the free space the status page shows: the data directory's
// and the blob store's, which for S3 is not known.
func (n *Node) diskInfo() []admin.DiskInfo {
	out := []admin.DiskInfo{n.diskOf("data directory", n.cfg.DataDir)}
	if n.cfg.Blobs.Kind == "s3" {
		return append(out, admin.DiskInfo{Name: "blob store", Where: n.cfg.Blobs.S3.Endpoint + "/" + n.cfg.Blobs.S3.Bucket,
			Error: "unknown: an S3 store does not say how much room it has left"})
	}
	return append(out, n.diskOf("blob store", n.cfg.Blobs.Dir))
}

func (n *Node) diskOf(name, dir string) admin.DiskInfo {
	d := admin.DiskInfo{Name: name, Where: n.shortPath(dir)}
	free, total, err := freeSpace(dir)
	if err != nil {
		d.Error = err.Error()
		return d
	}
	d.Known, d.Free, d.Size = true, free, total
	return d
}
