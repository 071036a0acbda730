#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A short, bounded libFuzzer pass over the `umsi sim` machine-file parser
# (and the small machines it builds and runs), from the committed seeds in
# tests/fuzz/corpus-simfile. `make fuzz-simfile-long` runs the long one.
# TAP output.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
bin=$BUILD/fuzz/fuzz_simfile
runs=${FUZZ_SIMFILE_RUNS:-20000}
echo "1..2"
if [ ! -x "$bin" ]; then
	echo "ok 1 - fuzz_simfile # SKIP not built (clang with libFuzzer needed)"
	echo "ok 2 - fuzz_simfile seeds # SKIP not built"
	exit 0
fi
# Every committed seed, the regression inputs among them, on its own.
if "$bin" -runs=0 tests/fuzz/corpus-simfile >"$BUILD/fuzz/fuzz_simfile-seeds.log" 2>&1; then
	echo "ok 1 - fuzz_simfile: every seed in tests/fuzz/corpus-simfile passes"
else
	echo "not ok 1 - fuzz_simfile: a seed fails; see $BUILD/fuzz/fuzz_simfile-seeds.log"
	tail -n 30 "$BUILD/fuzz/fuzz_simfile-seeds.log" | sed 's/^/# /'
fi
corpus=$BUILD/fuzz/corpus-simfile-smoke
rm -rf "$corpus"
mkdir -p "$corpus"
log=$BUILD/fuzz/fuzz_simfile-smoke.log
if "$bin" -seed=1 -runs="$runs" -max_total_time=30 -max_len=32768 \
	-dict=tests/fuzz/fuzz_simfile.dict -artifact_prefix="$BUILD/fuzz/" \
	"$corpus" tests/fuzz/corpus-simfile >"$log" 2>&1; then
	echo "ok 2 - fuzz_simfile: $runs runs without a crash, leak or sanitizer report"
else
	echo "not ok 2 - fuzz_simfile failed; see $log"
	tail -n 40 "$log" | sed 's/^/# /'
	exit 1
fi
