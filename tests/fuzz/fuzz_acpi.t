#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A short, bounded libFuzzer pass over the x86 reference kernel's ACPI
# table parsers (kernel/arch/x86_64/acpi.c: MADT, MCFG, FADT, DMAR), from tables shaped
# as QEMU q35 gives them (tests/fuzz/corpus-acpi). TAP output.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
. tests/fuzz/smoke.sh
fuzz_smoke fuzz_acpi "${FUZZ_ACPI_RUNS:-50000}" \
	"a crash or sanitizer report" \
	-max_total_time=30 -max_len=4096 -artifact_prefix="$BUILD/fuzz/acpi-" \
	-- tests/fuzz/corpus-acpi
