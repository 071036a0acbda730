#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# TAP: every unit test again, built with AddressSanitizer and UBSan
# (make test-asan, in build/asan).
cd "$(dirname "$0")/.." || exit 1
echo "1..1"
if out=$(make --no-print-directory -s test-asan 2>&1); then
	echo "ok 1 - unit tests pass under ASan+UBSan: $(echo "$out" | tail -n 1)"
else
	echo "not ok 1 - unit tests under ASan+UBSan"
	echo "$out" | tail -60 | sed 's/^/# /'
fi
