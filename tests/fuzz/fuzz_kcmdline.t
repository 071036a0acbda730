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
. tests/fuzz/smoke.sh
FUZZ_NEEDS="clang with libFuzzer on x86-64 needed"
fuzz_smoke fuzz_kcmdline "${FUZZ_KCMDLINE_RUNS:-20000}" \
	"a crash, leak, mismatch or sanitizer report" \
	-max_total_time=30 -max_len=2048 -dict=tests/fuzz/fuzz_kcmdline.dict -artifact_prefix="$BUILD/fuzz/" \
	-- tests/fuzz/corpus-kcmdline
