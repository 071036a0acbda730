#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# scripts/qemu-demo, the whole machine at once (two e1000e, two edu, nvme,
# xhci, virtio-net on six gapped CPUs, everything firing, IRQs migrating),
# passes every one of its checks under TCG.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();

my $out = `$FindBin::Bin/../../scripts/qemu-demo --accel tcg --events 20 --moves 300 2>&1`;
my $rc = $? >> 8;
is($rc, 0, 'qemu-demo exits 0') or diag($out);
like($out, qr/^\d+ passed, 0 failed$/m, 'no check failed');
like($out, qr/^Interrupts \(uMSI, per CPU\)$/m, 'interrupt table shown');
like($out, qr/^Vectors per CPU \(uMSI\)$/m, 'vector usage shown');
like($out, qr/^  PASS  CPU 3 \(APIC ID 4\) went offline and came back$/m, 'one CPU offline/online shown');
like($out, qr/^  PASS  hot-remove: every vector back/m, 'one hot-plug add/remove cycle shown');
done_testing();
