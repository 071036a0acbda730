#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A short, bounded libFuzzer pass over the x86 reference kernel's ACPI
# table parsers (kernel/arch/x86_64/acpi.c: MADT, MCFG, FADT, DMAR), from tables shaped
# as QEMU q35 gives them (tests/fuzz/corpus-acpi). TAP output.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
runs=${FUZZ_ACPI_RUNS:-50000}
echo "1..1"
bin=$BUILD/fuzz/fuzz_acpi
if [ ! -x "$bin" ]; then
	echo "ok 1 - fuzz_acpi # SKIP not built (clang with libFuzzer needed)"
	exit 0
fi
corpus=$BUILD/fuzz/corpus-acpi-smoke
rm -rf "$corpus"
mkdir -p "$corpus"
log=$BUILD/fuzz/fuzz_acpi-smoke.log
if "$bin" -seed=1 -runs="$runs" -max_total_time=30 -max_len=4096 \
	-artifact_prefix="$BUILD/fuzz/acpi-" \
	"$corpus" tests/fuzz/corpus-acpi >"$log" 2>&1; then
	echo "ok 1 - fuzz_acpi: $runs runs without a crash or sanitizer report"
else
	echo "not ok 1 - fuzz_acpi failed; see $log"
	tail -n 30 "$log" | sed 's/^/# /'
fi
