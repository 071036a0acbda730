#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# TAP: examples/minimal-host runs: one MSI-X function set up on a toy
# platform, its entry 0 written with an x86 message, the interrupt
# dispatched to the driver's handler on the CPU the message names, one EOI,
# everything given back.
cd "$(dirname "$0")/../.." || exit 1
bin=${BUILD:-build}/examples/minimal_host
echo "1..4"
if [ ! -x "$bin" ]; then
	for i in 1 2 3 4; do echo "not ok $i - $bin not built (make $bin)"; done
	exit 0
fi
out=$("$bin" 2>&1); rc=$?
[ $rc -eq 0 ] && echo "ok 1 - it exits 0" || echo "not ok 1 - exit $rc"
echo "$out" | grep -q '^4 MSI-X vectors, vector 0 is irq 24$' &&
	echo "ok 2 - four MSI-X vectors" || echo "not ok 2 - vectors"
echo "$out" | grep -qE '^entry 0: address 0xfee[0-9a-f]{5} data 0x00[2-9a-e][0-9a-f] -> cpu [01] vector 0x[0-9a-f]+, unmasked$' &&
	echo "ok 3 - entry 0 holds an unmasked x86 message" || echo "not ok 3 - entry 0"
echo "$out" | grep -q '^handler: irq 24 on cpu [01] (toy)$' &&
	echo "$out" | grep -q '^ok: one interrupt dispatched, 1 EOI$' &&
	echo "ok 4 - dispatched to the handler, one EOI" || echo "not ok 4 - dispatch"
echo "$out" | sed 's/^/# /'
