#!/usr/bin/env bash
# bench/run.sh: viaduct against the field, measured the way a user meets it.
#
#   bench/run.sh small      20,000 x 1 KiB: viaduct, resync-sync and a plain GET
#                           loop, 2 rounds
#   bench/run.sh large      100,000 x 1 KiB: the same
#   bench/run.sh flat       250,000 x 1 KiB (FLAT_N): viaduct alone, for its peak
#                           memory past the 100,000 of large
#   bench/run.sh big        1,000 x 10 MB: viaduct, a plain file copy and a plain
#                           HTTP loop (as it is and verifying), 2 rounds
#   bench/run.sh s3         20,000 x 1 KiB into MinIO: viaduct and a plain PUT loop,
#                           as minio-go sends it and with unsigned bodies
#   bench/run.sh million    1,000,000 x 1 KiB (MILLION_N): viaduct alone, sampled
#                           every 10 s (rate, memory, CPU), the bytes per resource
#                           on disk, then its Resource List and Change List served
#                           against a file server of the same bytes
#   bench/run.sh synth      a catalog of 10,000,000 resources (SYNTH_N) built with
#                           the catalog's batch apply; its Resource List served
#                           against a file server of the same bytes
#   bench/run.sh sources    50 Sources x 2,000 x 1 KiB (SOURCES, SOURCE_N), each
#                           behind 50 ms of round trip (bench/delayproxy), viaduct
#                           with its default politeness, then resync-sync on
#                           RESYNC_SOURCES (3) of them one after another
#   bench/run.sh all        small, large, big and s3
#   bench/run.sh ab [OLD]   viaduct built at OLD (a git revision; default
#                           HEAD) against the working tree, AB_N (20,000) x
#                           1 KiB baselines alternating, AB_PAIRS (10)
#                           pairs: the medians of CPU a resource and time,
#                           and in how many pairs the working tree's CPU
#                           was lower
#
# Environment: RESYNC (the resync 2.0.1 directory; default ../shared/anchors/
# resync-2.0.1 beside the checkout), WORK (scratch directory on the disk to
# measure; default a new one under /var/tmp), ROUNDS (default 2), WARMUP
# (rounds run first and left out of the table; default 1 for small, big
# and s3, 0 for large and flat), FLAT_N
# (default 250000), MINIO (the MinIO server binary; default $(go env
# GOPATH)/bin/minio), S3_PIN (1: MinIO on the second core, the Source and
# the contenders on the first), SHA256 (1: the Source declares each
# bitstream's sha-256 beside its md5, as an aggregator does; its own
# directory under WORK).
# The Source is served by bench/staticsrc in a process of its own; every
# contender is a process of its own, timed from its start. See bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
RESYNC=${RESYNC:-$root/../shared/anchors/resync-2.0.1}
ROUNDS=${ROUNDS:-2}
FLAT_N=${FLAT_N:-250000}
MINIO=${MINIO:-$(go env GOPATH)/bin/minio}
WORK=${WORK:-$(mktemp -d /var/tmp/viaduct-bench.XXXXXX)}
mkdir -p "$WORK/bin"
port=18181
pids=()
pin=() # a command that pins the Source and the contenders to CPUs (s3 with S3_PIN)
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# Every binary is built, then copied into $WORK/bin and run from there,
# as a release, a package or a container image installs it. The linker
# writes its output through a shared mapping, and on a kernel that keeps
# such a file's page cache in large folios a freshly linked program maps
# most of its file at its first touches: `viaduct --help` peaks at 39 MB
# as linked and at 23 MB as copied (11-29), which is the binary, not the
# work measured.
echo "building into $WORK/bin" >&2
mkdir -p "$WORK/linked"
for cmd in cmd/viaduct bench/staticsrc bench/compare bench/s3put bench/httpget bench/scale bench/delayproxy; do
	name=$(basename "$cmd")
	go build -o "$WORK/linked/$name" "./$cmd"
	rm -f "$WORK/bin/$name"
	cp "$WORK/linked/$name" "$WORK/bin/$name"
done

# source N SIZE: generates (once) and serves a static Source; sets $src.
source_up() {
	local n=$1 size=$2
	local declare=()
	src="$WORK/src-$n-$size"
	if [ "${SHA256:-}" = 1 ]; then declare=(-sha256); src="$src-sha256"; fi
	if [ ! -f "$src/.well-known/resourcesync" ]; then
		echo "generating $n x $size bytes in $src" >&2
		"$WORK/bin/staticsrc" gen -dir "$src" -base "http://127.0.0.1:$port" -n "$n" -size "$size" "${declare[@]}"
	fi
	# Something else answering on the port would be measured instead.
	if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$port/"; then
		echo "127.0.0.1:$port is already taken: stop what listens there" >&2
		exit 1
	fi
	"${pin[@]}" "$WORK/bin/staticsrc" serve -dir "$src" -listen "127.0.0.1:$port" 2>"$WORK/staticsrc.log" &
	srcpid=$!
	pids+=("$srcpid")
	for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/.well-known/resourcesync" >/dev/null && return; sleep 0.1; done
	echo "static Source did not start" >&2
	exit 1
}
source_down() { kill "$srcpid"; wait "$srcpid" 2>/dev/null || true; }

compare() {
	sync
	"${pin[@]}" "$WORK/bin/compare" -viaduct "$WORK/bin/viaduct" -resync "$RESYNC" -s3put "$WORK/bin/s3put" -httpget "$WORK/bin/httpget" \
		-source "http://127.0.0.1:$port/" -source-dir "$src" -work "$WORK" -rounds "$ROUNDS" "$@"
}

small() { source_up 20000 1024; compare -n 20000 -size 1024 -with resync,viaduct,get -warmup "${WARMUP:-1}"; source_down; }
large() { source_up 100000 1024; compare -n 100000 -size 1024 -with resync,viaduct,get -warmup "${WARMUP:-0}"; source_down; }
flat() { source_up "$FLAT_N" 1024; compare -n "$FLAT_N" -size 1024 -with viaduct -warmup "${WARMUP:-0}"; source_down; }
big() { source_up 1000 10000000; compare -n 1000 -size 10000000 -with copy,get,get-verify,viaduct -warmup "${WARMUP:-1}"; source_down; }
s3() {
	# Every contender's run gets a fresh MinIO (compare -minio) on free
	# loopback ports, so that none writes into a server holding the
	# objects of the runs before it.
	# S3_PIN=1 gives MinIO the second core and everything else the first,
	# as an S3 service on hardware of its own would be: the rates then say
	# how near each client comes to the server's limit, not how the three
	# processes share two cores.
	local minio=$MINIO
	if [ "${S3_PIN:-}" = 1 ]; then minio="taskset -c 1 $MINIO"; pin=(taskset -c 0); fi
	source_up 20000 1024
	compare -n 20000 -size 1024 -with s3put,s3put-unsigned,viaduct -blobs s3 -minio "$minio" -warmup "${WARMUP:-1}"
	source_down
}

# million: one node harvests MILLION_N x 1 KiB, sampled every 10 s into
# $WORK/million-*/baseline.csv; then its lists are served and read.
million() {
	local n=${MILLION_N:-1000000}
	source_up "$n" 1024
	local run
	run=$(mktemp -d "$WORK/million-XXXX")
	sync
	"$WORK/bin/scale" baseline -viaduct "$WORK/bin/viaduct" -source "http://127.0.0.1:$port/" -n "$n" -work "$run" -profile-at 0.1,0.9
	source_down
	"$WORK/bin/scale" lists -viaduct "$WORK/bin/viaduct" -source "http://127.0.0.1:$port/" -work "$run"
}

# synth: a catalog of SYNTH_N resources, built once, then served.
synth() {
	local n=${SYNTH_N:-10000000}
	local cat="$WORK/synth-$n.db"
	[ -f "$cat" ] || "$WORK/bin/scale" synth -catalog "$cat" -n "$n"
	"$WORK/bin/scale" catlists -catalog "$cat" -work "$(mktemp -d "$WORK/synth-XXXX")"
}

# sources: SOURCES static Sources behind a delaying proxy (25 ms each way).
sources() {
	local count=${SOURCES:-50} n=${SOURCE_N:-2000} first=19000 proxied=19100
	local src="$WORK/src-sources-$count-$n"
	for i in $(seq 0 $((count - 1))); do
		local d
		d=$(printf '%s/%02d' "$src" "$i")
		[ -f "$d/.well-known/resourcesync" ] ||
			"$WORK/bin/staticsrc" gen -dir "$d" -base "http://127.0.0.1:$((proxied + i))" -n "$n" -size 1024 -seed $((i + 1))
	done
	"$WORK/bin/staticsrc" serve -dir "$src" -listen "127.0.0.1:$first" -count "$count" 2>"$WORK/staticsrc.log" &
	pids+=($!)
	"$WORK/bin/delayproxy" -listen "127.0.0.1:$proxied" -to "127.0.0.1:$first" -count "$count" -delay 25ms 2>"$WORK/delayproxy.log" &
	pids+=($!)
	for _ in $(seq 100); do curl -fs "http://127.0.0.1:$((proxied + count - 1))/.well-known/resourcesync" >/dev/null && break; sleep 0.1; done
	"$WORK/bin/scale" sources -viaduct "$WORK/bin/viaduct" -first "127.0.0.1:$proxied" -count "$count" -n "$n" \
		-work "$(mktemp -d "$WORK/sources-XXXX")" -resync "$RESYNC" -resync-sources "${RESYNC_SOURCES:-3}"
}

# ab OLD: the build at revision OLD against the working tree's, one
# `scale baseline` each in turn, so that a slow hour weighs on both.
ab() {
	local old=${1:-HEAD} n=${AB_N:-20000} pairs=${AB_PAIRS:-10}
	local tree="$WORK/ab-tree"
	rm -rf "$tree"
	git worktree prune
	git worktree add --detach "$tree" "$old" >/dev/null
	(cd "$tree" && go build -o "$WORK/linked/viaduct-old" ./cmd/viaduct)
	git worktree remove --force "$tree"
	cp "$WORK/linked/viaduct-old" "$WORK/bin/viaduct-old"
	source_up "$n" 1024
	local out="$WORK/ab.txt"
	: >"$out"
	for i in $(seq "$pairs"); do
		for side in old new; do
			local bin="$WORK/bin/viaduct" run="$WORK/ab-run"
			[ "$side" = old ] && bin="$WORK/bin/viaduct-old"
			rm -rf "$run"
			"$WORK/bin/scale" baseline -viaduct "$bin" -source "http://127.0.0.1:$port/" -n "$n" -work "$run" -every 1h >"$WORK/ab-run.log" 2>&1
			# "N resources in T s ..." and "CPU C s (S s system): U µs a resource"
			awk -v side="$side" -v pair="$i" '
				/ resources in / { t = $4 }
				/^CPU / { u = $7 }
				END { print pair, side, t, u }' "$WORK/ab-run.log" | tee -a "$out"
		done
	done
	source_down
	awk '
		{ t[$2] = t[$2] " " $3; u[$2] = u[$2] " " $4; if ($2 == "old") o = $4; else if ($4 < o) lower++ }
		function median(list,   a, n, i, j, x) {
			n = split(list, a, " ")
			for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		END {
			printf "old: median %s CPU-µs a resource, %s s\n", median(u["old"]), median(t["old"])
			printf "new: median %s CPU-µs a resource, %s s\n", median(u["new"]), median(t["new"])
			printf "new lower in %d of %d pairs\n", lower, NR / 2
		}' "$out"
}

case "${1:-small}" in
small) small ;;
large) large ;;
flat) flat ;;
big) big ;;
s3) s3 ;;
million) million ;;
synth) synth ;;
sources) sources ;;
all) small; large; big; s3 ;;
ab) ab "${2:-HEAD}" ;;
*) echo "usage: bench/run.sh small|large|flat|big|s3|million|synth|sources|all|ab [OLD]" >&2; exit 2 ;;
esac
