// Package miniotest runs a real MinIO server for tests of the S3 blob store.
// The server is a separate process on 127.0.0.1 with its data in the test's
// temporary directory, stopped when the test ends. Launch starts one
// outside a test, for the benchmark harness (bench/compare).
package miniotest
