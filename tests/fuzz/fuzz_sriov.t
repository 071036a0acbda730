#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A short, bounded libFuzzer pass over the SR-IOV capability parser and
# check (src/pci/cap.c), from the committed seeds in tests/fuzz/corpus-sriov
# (QEMU's nvme, and each hostile shape the check refuses).
# `make fuzz-sriov-long` runs a long one. TAP output.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
bin=$BUILD/fuzz/fuzz_sriov
runs=${FUZZ_SRIOV_RUNS:-50000}
echo "1..1"
if [ ! -x "$bin" ]; then
	echo "ok 1 - fuzz_sriov # SKIP not built (clang with libFuzzer needed)"
	exit 0
fi
corpus=$BUILD/fuzz/corpus-sriov-smoke
rm -rf "$corpus"
mkdir -p "$corpus"
log=$BUILD/fuzz/fuzz_sriov-smoke.log
if "$bin" -seed=1 -runs="$runs" -max_total_time=30 -max_len=126 \
	-artifact_prefix="$BUILD/fuzz/sriov-" "$corpus" tests/fuzz/corpus-sriov \
	>"$log" 2>&1; then
	echo "ok 1 - fuzz_sriov: $runs runs without a crash, a broken promise or a sanitizer report"
else
	echo "not ok 1 - fuzz_sriov failed; see $log"
	tail -n 40 "$log" | sed 's/^/# /'
	exit 1
fi
