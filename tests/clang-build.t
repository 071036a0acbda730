#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# TAP: the whole tree (library, simulator, tools, tests, kernel) also
# builds with clang under -std=c11 -Wall -Wextra -Werror.
cd "$(dirname "$0")/.." || exit 1
echo "1..1"
if out=$(make --no-print-directory -s CC=clang BUILD=build/clang real-all build-tests 2>&1); then
	echo "ok 1 - clang builds everything warning-free"
else
	echo "not ok 1 - clang build"
	echo "$out" | tail -40 | sed 's/^/# /'
fi
