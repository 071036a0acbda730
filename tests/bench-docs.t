#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The figure tables in docs/bench-*.md and README.md are what the code
# prints now: scripts/bench-docs --check runs make bench-dispatch,
# bench-bringup and bench-matrix and compares their deterministic figures
# (callgrind instruction counts, locked instructions in the object code,
# bytes) with the committed tables. A change that moves a figure must come
# with `make bench`, which rewrites them. About 30 s. TAP output.
set -u
cd "$(dirname "$0")/.."
echo "1..1"
if ! command -v valgrind >/dev/null 2>&1; then
	echo "ok 1 - bench tables # SKIP valgrind not installed"
	exit 0
fi
log=${BUILD:-build}/bench-docs.log
mkdir -p "$(dirname "$log")"
if scripts/bench-docs --check >"$log" 2>&1; then
	echo "ok 1 - the bench tables in docs/ and README.md are what the benchmarks print now"
else
	echo "not ok 1 - a bench table is stale (run make bench); see $log"
	sed 's/^/# /' "$log" | tail -n 40
	exit 1
fi
