#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# TAP: examples/own-pci-host runs on the simulator (x86, then x86 with a
# VT-d unit): a kernel that programs MSI-X itself through the
# message-level API (umsi/source.h), with its own IRQ numbers, its own
# EOI and its register frame in every handler; per-call allocation, a
# subset freed; a move, a CPU offline and (VT-d) a remappable handle all
# reach the device through the kernel's write callback. Each of the
# example's own checks is one test here.
cd "$(dirname "$0")/../.." || exit 1
bin=${BUILD:-build}/examples/own_pci_host
if [ ! -x "$bin" ]; then
	echo "1..1"
	echo "not ok 1 - $bin not built (make $bin)"
	exit 0
fi
out=$("$bin" 2>&1); rc=$?
n=$(echo "$out" | grep -cE '^(ok|FAIL) - ')
echo "1..$((n + 2))"
i=0
while IFS= read -r l; do
	case $l in
	"ok - "*) i=$((i + 1)); echo "ok $i - ${l#ok - }" ;;
	"FAIL - "*) i=$((i + 1)); echo "not ok $i - ${l#FAIL - }" ;;
	"#"*) echo "$l" ;;
	esac
done <<<"$out"
[ "$n" -ge 29 ] && echo "ok $((n + 1)) - all $n checks ran" ||
	echo "not ok $((n + 1)) - only $n checks ran"
[ $rc -eq 0 ] && echo "ok $((n + 2)) - it exits 0" || echo "not ok $((n + 2)) - exit $rc"
