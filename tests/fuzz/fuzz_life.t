#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A short, bounded libFuzzer pass over the whole device life cycle (the
# library on the simulator: devices, operations, failed host calls and
# vanishing devices from the input), from the seeds in tests/fuzz/seeds-life.
# `make fuzz-life-long` runs the long one. TAP output.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
bin=$BUILD/fuzz/fuzz_life
runs=${FUZZ_LIFE_RUNS:-20000}
echo "1..1"
if [ ! -x "$bin" ]; then
	echo "ok 1 - fuzz_life # SKIP not built (clang with libFuzzer needed)"
	exit 0
fi
corpus=$BUILD/fuzz/corpus-life-smoke
rm -rf "$corpus"
mkdir -p "$corpus"
log=$BUILD/fuzz/fuzz_life-smoke.log
if "$bin" -seed=1 -runs="$runs" -max_len=256 -timeout=10 \
	-artifact_prefix="$BUILD/fuzz/life-" "$corpus" tests/fuzz/seeds-life \
	>"$log" 2>&1; then
	echo "ok 1 - fuzz_life: $runs runs without a crash, leak, sanitizer report or a device aimed at a free vector"
else
	echo "not ok 1 - fuzz_life failed; see $log"
	tail -n 40 "$log" | sed 's/^/# /'
	exit 1
fi
