#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A short, bounded libFuzzer pass over the text `umsi inspect` reads on a
# live machine (tools/inspect/livetext.c), from the committed seeds in
# tests/fuzz/corpus-livetext. `make fuzz-livetext-long` runs a long one.
# TAP output.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
. tests/fuzz/smoke.sh
fuzz_smoke fuzz_livetext "${FUZZ_LIVETEXT_RUNS:-20000}" \
	"a crash, leak or sanitizer report" \
	-max_total_time=30 -max_len=8192 -dict=tests/fuzz/fuzz_livetext.dict -artifact_prefix="$BUILD/fuzz/" \
	-- tests/fuzz/corpus-livetext
