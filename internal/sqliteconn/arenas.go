package sqliteconn

// SQLite takes its memory from C's malloc, on whichever thread a cgo call
// runs, and glibc gives each new thread that allocates an arena of its
// own, up to eight per core, each keeping pages it has freed. A program
// that links this package caps the arenas at one per online core (at
// least two) as it loads, before any thread has allocated (arenas_glibc.go):
// a baseline of 20,000 resources held 21-22 MB of small anonymous
// mappings at its peak, and about half that with the cap, at the same
// CPU (docs/benchmarks.md). Set after the program started, the cap came
// too late: the Go runtime's threads had made seven arenas already. An
// operator's MALLOC_ARENA_MAX, which glibc reads itself, is left as it
// is; elsewhere than glibc nothing is set.
