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
. tests/fuzz/smoke.sh
fuzz_smoke fuzz_sriov "${FUZZ_SRIOV_RUNS:-50000}" \
	"a crash, a broken promise or a sanitizer report" \
	-max_total_time=30 -max_len=126 -artifact_prefix="$BUILD/fuzz/sriov-" \
	-- tests/fuzz/corpus-sriov
