//go:build linux && cgo

package sqliteconn

/*
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>

static int arenaCap;

// capArenas runs as the program loads, before any thread allocates (see
// the package's doc).
__attribute__((constructor)) static void capArenas(void) {
	if (getenv("MALLOC_ARENA_MAX") != NULL) return;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 2) n = 2;
	if (mallopt(M_ARENA_MAX, (int)n) == 1) arenaCap = (int)n;
}

static int cappedAt(void) { return arenaCap; }

// countArenas counts the arenas malloc_info describes (a <heap> each),
// -1 where it cannot tell.
static int countArenas(void) {
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL) return -1;
	int err = malloc_info(0, f);
	fclose(f);
	if (err != 0) { free(buf); return -1; }
	int n = 0;
	for (char *p = buf; (p = strstr(p, "<heap nr=")) != NULL; p++) n++;
	free(buf);
	return n;
}
#else
static int cappedAt(void) { return 0; }
static int countArenas(void) { return -1; }
#endif
*/
import "C"

func arenaCap() int { return int(C.cappedAt()) }

func countArenas() int { return int(C.countArenas()) }
