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
. tests/fuzz/smoke.sh
fuzz_smoke fuzz_kpci "${FUZZ_KPCI_RUNS:-50000}" \
	"a crash or sanitizer report" \
	-max_total_time=30 -max_len=512 -artifact_prefix="$BUILD/fuzz/kpci-" \
	-- tests/fuzz/corpus-kpci
