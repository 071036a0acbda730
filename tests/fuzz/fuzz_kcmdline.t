#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A short, bounded libFuzzer pass over the reference kernel's command line
# parser (kernel/common/cmdline.c) and kstrtou64, from the committed seeds in
# tests/fuzz/corpus-kcmdline. `make fuzz-kcmdline-long` runs a long one.
# TAP output.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
bin=$BUILD/fuzz/fuzz_kcmdline
runs=${FUZZ_KCMDLINE_RUNS:-20000}
echo "1..1"
if [ ! -x "$bin" ]; then
	echo "ok 1 - fuzz_kcmdline # SKIP not built (clang with libFuzzer on x86-64 needed)"
	exit 0
fi
corpus=$BUILD/fuzz/corpus-kcmdline-smoke
rm -rf "$corpus"
mkdir -p "$corpus"
log=$BUILD/fuzz/fuzz_kcmdline-smoke.log
if "$bin" -seed=1 -runs="$runs" -max_total_time=30 -max_len=2048 \
	-dict=tests/fuzz/fuzz_kcmdline.dict -artifact_prefix="$BUILD/fuzz/" \
	"$corpus" tests/fuzz/corpus-kcmdline >"$log" 2>&1; then
	echo "ok 1 - fuzz_kcmdline: $runs runs without a crash, leak, mismatch or sanitizer report"
else
	echo "not ok 1 - fuzz_kcmdline failed; see $log"
	tail -n 40 "$log" | sed 's/^/# /'
	exit 1
fi
