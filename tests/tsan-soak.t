#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# TAP: the threaded soak (CPU hotplug and affinity changes beside device
# add/alloc/fire/free/remove) under ThreadSanitizer.
cd "$(dirname "$0")/.." || exit 1
echo "1..1"
if out=$(make --no-print-directory tsan-soak 2>&1); then
	echo "ok 1 - threaded soak clean under ThreadSanitizer"
	echo "$out" | grep -E 'soak:|PASSED' | sed 's/^/# /'
else
	echo "not ok 1 - threaded soak under ThreadSanitizer"
	echo "$out" | grep -E 'SUMMARY|soak:|FAILED|ERROR' | sed 's/^/# /'
	echo "$out" | tail -60 | sed 's/^/# /'
fi
