#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# TAP: live migration against CPU threads under ThreadSanitizer.
cd "$(dirname "$0")/.." || exit 1
echo "1..1"
if out=$(make --no-print-directory tsan-irq 2>&1); then
	echo "ok 1 - threaded migration clean under ThreadSanitizer"
	echo "$out" | grep -E 'moves|PASSED' | sed 's/^/# /'
else
	echo "not ok 1 - threaded migration under ThreadSanitizer"
	echo "$out" | tail -60 | sed 's/^/# /'
fi
