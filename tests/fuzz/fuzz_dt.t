#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A short, bounded libFuzzer pass over each reference kernel's reading of
# the device tree (kernel/arch/arm64/dt.c, kernel/arch/riscv64/platform.c;
# mk/fuzz-dt.mk), from the trees QEMU gives (tests/fuzz/corpus-fdt) and
# the host-bridge trees and regressions of tests/fuzz/corpus-dt (written
# by build/tests/test_dt_ARCH --write-trees). Every seed is replayed
# first. TAP output.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
runs=${FUZZ_DT_RUNS:-20000}
echo "1..2"
n=0
for arch in arm64 riscv64; do
	n=$((n + 1))
	bin=$BUILD/fuzz/fuzz_dt_$arch
	if [ ! -x "$bin" ]; then
		echo "ok $n - fuzz_dt_$arch # SKIP not built (clang with libFuzzer needed)"
		continue
	fi
	corpus=$BUILD/fuzz/corpus-dt-$arch-smoke
	rm -rf "$corpus"
	mkdir -p "$corpus"
	log=$BUILD/fuzz/fuzz_dt_$arch-smoke.log
	if "$bin" -seed=1 -runs="$runs" -max_total_time=30 -max_len=16384 \
		-artifact_prefix="$BUILD/fuzz/dt-$arch-" \
		"$corpus" tests/fuzz/corpus-dt tests/fuzz/corpus-fdt >"$log" 2>&1; then
		echo "ok $n - fuzz_dt_$arch: $runs runs without a crash, sanitizer report or check failure"
	else
		echo "not ok $n - fuzz_dt_$arch failed; see $log"
		tail -n 30 "$log" | sed 's/^/# /'
	fi
done
