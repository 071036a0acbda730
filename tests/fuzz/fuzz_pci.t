#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A short, bounded libFuzzer pass over the PCI layer (configuration space,
# BAR layouts, host failures, boot parameters), from generated seeds.
# `make fuzz-pci-long` runs the long one. TAP output.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
bin=$BUILD/fuzz/fuzz_pci
runs=${FUZZ_PCI_RUNS:-20000}
echo "1..1"
if [ ! -x "$bin" ]; then
	echo "ok 1 - fuzz_pci # SKIP not built (clang with libFuzzer needed)"
	exit 0
fi
seeds=$BUILD/fuzz/seeds-pci
corpus=$BUILD/fuzz/corpus-pci-smoke
rm -rf "$corpus"
mkdir -p "$seeds" "$corpus"
FUZZ_PCI_SEEDS=$seeds "$bin" >/dev/null 2>&1
log=$BUILD/fuzz/fuzz_pci-smoke.log
if "$bin" -seed=1 -runs="$runs" -max_len=600 \
	-artifact_prefix="$BUILD/fuzz/" "$corpus" "$seeds" >"$log" 2>&1; then
	echo "ok 1 - fuzz_pci: $runs runs without a crash, leak or sanitizer report"
else
	echo "not ok 1 - fuzz_pci failed; see $log"
	tail -n 40 "$log" | sed 's/^/# /'
	exit 1
fi
