#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A short, bounded libFuzzer pass over the whole device life cycle (the
# library on the simulator: devices, operations, failed host calls and
# vanishing devices from the input), from the seeds in tests/fuzz/seeds-life.
# `make fuzz-life-long` runs the long one. TAP output.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
. tests/fuzz/smoke.sh
fuzz_smoke fuzz_life "${FUZZ_LIFE_RUNS:-20000}" \
	"a crash, leak, sanitizer report or a device aimed at a free vector" \
	-max_len=256 -timeout=10 -artifact_prefix="$BUILD/fuzz/life-" \
	-- tests/fuzz/seeds-life
