#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A short, bounded libFuzzer pass over the reference kernels' reading of a
# bridge's configuration space (kernel/common/pci.c: hot-plug port room,
# QEMU's resource-reserve hint, the capability scan), from root ports
# shaped as QEMU's (tests/fuzz/corpus-kpci). TAP output.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
runs=${FUZZ_KPCI_RUNS:-50000}
echo "1..1"
bin=$BUILD/fuzz/fuzz_kpci
if [ ! -x "$bin" ]; then
	echo "ok 1 - fuzz_kpci # SKIP not built (clang with libFuzzer needed)"
	exit 0
fi
corpus=$BUILD/fuzz/corpus-kpci-smoke
rm -rf "$corpus"
mkdir -p "$corpus"
log=$BUILD/fuzz/fuzz_kpci-smoke.log
if "$bin" -seed=1 -runs="$runs" -max_total_time=30 -max_len=512 \
	-artifact_prefix="$BUILD/fuzz/kpci-" \
	"$corpus" tests/fuzz/corpus-kpci >"$log" 2>&1; then
	echo "ok 1 - fuzz_kpci: $runs runs without a crash or sanitizer report"
else
	echo "not ok 1 - fuzz_kpci failed; see $log"
	tail -n 30 "$log" | sed 's/^/# /'
fi
