#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A short, bounded libFuzzer pass over the text `umsi inspect` reads on a
# live machine (tools/inspect/livetext.c), from the committed seeds in
# tests/fuzz/corpus-livetext. `make fuzz-livetext-long` runs a long one.
# TAP output.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
bin=$BUILD/fuzz/fuzz_livetext
runs=${FUZZ_LIVETEXT_RUNS:-20000}
echo "1..1"
if [ ! -x "$bin" ]; then
	echo "ok 1 - fuzz_livetext # SKIP not built (clang with libFuzzer needed)"
	exit 0
fi
corpus=$BUILD/fuzz/corpus-livetext-smoke
rm -rf "$corpus"
mkdir -p "$corpus"
log=$BUILD/fuzz/fuzz_livetext-smoke.log
if "$bin" -seed=1 -runs="$runs" -max_total_time=30 -max_len=8192 \
	-dict=tests/fuzz/fuzz_livetext.dict -artifact_prefix="$BUILD/fuzz/" \
	"$corpus" tests/fuzz/corpus-livetext >"$log" 2>&1; then
	echo "ok 1 - fuzz_livetext: $runs runs without a crash, leak or sanitizer report"
else
	echo "not ok 1 - fuzz_livetext failed; see $log"
	tail -n 40 "$log" | sed 's/^/# /'
	exit 1
fi
