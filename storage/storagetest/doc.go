// Package storagetest is the one test suite every storage.Blobs
// implementation must pass, and the benchmark they are compared with. A store
// package calls Run from its own tests with a constructor for fresh, empty
// stores.
package storagetest
