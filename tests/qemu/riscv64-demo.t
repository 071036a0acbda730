#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# make demo ARCH=riscv64 (scripts/qemu-demo --arch riscv64): the riscv64
# kernel on QEMU virt with the AIA, edu, e1000e, nvme and xhci behind
# pcie-root-ports, every device firing, IRQs migrating, CPU 3 offline
# (SBI HSM) and back, the tables, and the monitor's reading of every
# MSI/MSI-X message as (the hart's S-level interrupt file, identity),
# and an e1000e hot-added into an empty root port and removed, passes
# every one of its checks.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;

plan skip_all => "$UmsiQemu::RV_QEMU not installed"
	unless UmsiQemu::have_qemu('riscv64');
plan skip_all => "$UmsiQemu::RV_KERNEL not built (make kernel-riscv64)"
	unless -f $UmsiQemu::RV_KERNEL;
{
	my $r = UmsiQemu::run(arch => 'riscv64', smp => 1, timeout => 60);
	plan skip_all => 'riscv64 kernel linked without the uMSI library (IMSIC back end missing)'
		if $r->{serial} =~ /^umsi: library not linked/m;
}

my $out = `$FindBin::Bin/../../scripts/qemu-demo --arch riscv64 --events 20 --moves 300 2>&1`;
my $rc = $? >> 8;
is($rc, 0, 'qemu-demo --arch riscv64 exits 0') or diag($out);
like($out, qr/^\d+ passed, 0 failed$/m, 'no check failed');
like($out, qr/^machine: QEMU virt \(AIA: APLIC \+ IMSIC\), OpenSBI, tcg, 4 harts /m,
     'the machine: virt with the AIA, 4 harts');
for my $dev (qw(edu e1000e nvme xhci)) {
	like($out, qr/^  0000:0\d:00\.0  \Q$dev\E\s+msi/m, "$dev listed with its mode");
	like($out, qr/^  PASS  \Q$dev\E\s+\S+ vector \d+ +\d+ raised, +\d+ handled on CPU \d \(hart \d, identity \d+\)$/m,
	     "$dev fired, each event on the hart uMSI chose");
}
like($out, qr/^  PASS  (?:edu|e1000e) +\S+ migrated 300 times under fire/m, 'an IRQ migrated under fire');
like($out, qr/^Interrupts \(uMSI, per CPU\)$/m, 'interrupt table shown');
like($out, qr/^Vectors per CPU \(uMSI/m, 'vector usage shown');
like($out, qr/^  PASS  CPU 3 \(hart 3\) went offline and came back$/m, 'one hart offline/online');
like($out, qr/^  PASS  monitor: 0000:04:00\.0 msi matches the hardware$/m,
     'monitor: the xhci MSI block as uMSI claims');
like($out, qr/^  PASS  monitor: no \(hart, identity\) pair used twice$/m,
     'monitor: messages decoded as (hart, identity)');
like($out, qr/^  PASS  hot-add: \d+ vectors fired, each on the CPU uMSI chose$/m, 'hot-add: the e1000e fired on the chosen CPUs');
like($out, qr/^  PASS  monitor: hot-added \S+ msix matches the hardware$/m, 'hot-add: the monitor reads it as uMSI says');
like($out, qr/^  PASS  hot-remove: every vector back/m, 'one hot-plug add/remove cycle shown');
done_testing();
