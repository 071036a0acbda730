#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A short, bounded libFuzzer pass over the reference kernels' device-tree
# reader (kernel/common/fdt.c, riscv64's and arm64's), from each
# machine's device tree as QEMU gives it (tests/fuzz/corpus-fdt). TAP
# output.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
runs=${FUZZ_FDT_RUNS:-20000}
echo "1..2"
n=0
for arch in riscv64 arm64; do
	n=$((n + 1))
	bin=$BUILD/fuzz/fuzz_fdt
	if [ ! -x "$bin" ]; then
		echo "ok $n - fuzz_fdt from the $arch tree # SKIP not built (clang with libFuzzer needed)"
		continue
	fi
	corpus=$BUILD/fuzz/corpus-fdt-$arch-smoke
	rm -rf "$corpus"
	mkdir -p "$corpus"
	cp tests/fuzz/corpus-fdt/$arch-* "$corpus"/
	log=$BUILD/fuzz/fuzz_fdt_$arch-smoke.log
	if "$bin" -seed=1 -runs="$runs" -max_total_time=30 -max_len=16384 \
		-artifact_prefix="$BUILD/fuzz/fdt-$arch-" \
		"$corpus" >"$log" 2>&1; then
		echo "ok $n - fuzz_fdt from the $arch tree: $runs runs without a crash or sanitizer report"
	else
		echo "not ok $n - fuzz_fdt from the $arch tree failed; see $log"
		tail -n 30 "$log" | sed 's/^/# /'
	fi
done
