#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# make demo ARCH=arm64 (scripts/qemu-demo --arch arm64): the arm64 kernel
# on QEMU virt with GICv3 and an ITS (virt,gic-version=3,its=on), 4 CPUs,
# edu, e1000e, nvme and xhci behind pcie-root-ports, every device firing
# (each event once on the CPU and LPI uMSI chose), IRQs migrating, CPU 3
# offline (PSCI CPU_OFF) and back, the tables, and the monitor's reading
# of every MSI/MSI-X message as (GITS_TRANSLATER, EventID), passes every
# one of its checks. An e1000e is hot-added into an empty root port and
# removed. Then make demo ARCH=arm64 GIC=2 (--gic 2): the same on a GICv2 with
# its v2m frame (virt,gic-version=2), SPIs instead of LPIs, the messages
# (MSI_SETSPI_NS, SPI), the distributor's routing from QEMU's trace.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;

plan skip_all => "$UmsiQemu::ARM64_QEMU not installed"
	unless UmsiQemu::have_qemu('arm64');
plan skip_all => "$UmsiQemu::ARM64_KERNEL not built (make kernel-arm64)"
	unless -f $UmsiQemu::ARM64_KERNEL;
{
	my $r = UmsiQemu::run(arch => 'arm64', smp => 1, timeout => 60);
	plan skip_all => 'arm64 kernel linked without the uMSI library (ITS back end missing)'
		if $r->{serial} =~ /^umsi: library not linked/m;
}

my $out = `$FindBin::Bin/../../scripts/qemu-demo --arch arm64 --events 20 --moves 300 2>&1`;
my $rc = $? >> 8;
is($rc, 0, 'qemu-demo --arch arm64 exits 0') or diag($out);
like($out, qr/^\d+ passed, 0 failed$/m, 'no check failed');
like($out, qr/^machine: QEMU virt \(GICv3 \+ ITS at 0x8080000, GITS_TRANSLATER 0x8090040\), tcg, 4 CPUs, MPIDRs 0x0 0x1 0x2 0x3,/m,
     'the machine: virt with GICv3 and the ITS, 4 CPUs');
for my $dev (qw(edu e1000e nvme xhci)) {
	like($out, qr/^  0000:0\d:00\.0  \Q$dev\E\s+msi/m, "$dev listed with its mode");
	like($out, qr/^  PASS  \Q$dev\E\s+\S+ vector \d+ +\d+ raised, +\d+ handled on CPU \d \(LPI \d{4,}, EventID \d+\)(?:, \d+ repeats ignored)?$/m,
	     "$dev fired, each event on the CPU and LPI uMSI chose");
}
like($out, qr/^  PASS  (?:edu|e1000e) +\S+ migrated 300 times under fire/m, 'an IRQ migrated under fire');
like($out, qr/^Interrupts \(uMSI, per CPU\)$/m, 'interrupt table shown');
like($out, qr/^Vectors per CPU \(uMSI/m, 'vector usage shown');
like($out, qr/^  PASS  CPU 3 \(MPIDR 0x3\) went offline and came back$/m, 'one CPU offline/online');
like($out, qr/^  PASS  every vector: EventID = its message index, LPI = first_lpi/m,
     "uMSI's claims: EventID and LPI per vector");
like($out, qr/^  PASS  monitor: 0000:04:00\.0 msi matches the hardware$/m,
     'monitor: the xhci MSI block as uMSI claims');
like($out, qr/^  PASS  monitor: no \(DeviceID, EventID\) pair used twice$/m,
     'monitor: no (DeviceID, EventID) twice');
like($out, qr/^  PASS  monitor: messages decoded as \(GITS_TRANSLATER 0x8090040, EventID\)$/m,
     'monitor: messages decoded as (GITS_TRANSLATER, EventID)');
like($out, qr/^  PASS  hot-add: \d+ vectors fired, each on the CPU uMSI chose$/m, 'hot-add: the e1000e fired on the chosen CPUs');
like($out, qr/^  PASS  monitor: hot-added \S+ msix matches the hardware$/m, 'hot-add: the monitor reads it as uMSI says');
like($out, qr/^  PASS  hot-remove: every vector back/m, 'one hot-plug add/remove cycle shown');

$out = `$FindBin::Bin/../../scripts/qemu-demo --arch arm64 --gic 2 --events 20 --moves 300 2>&1`;
$rc = $? >> 8;
is($rc, 0, 'qemu-demo --arch arm64 --gic 2 exits 0') or diag($out);
like($out, qr/^\d+ passed, 0 failed$/m, 'GICv2m: no check failed');
like($out, qr/^  PASS  hot-remove: every vector back/m, 'GICv2m: one hot-plug add/remove cycle shown');
like($out, qr/^machine: QEMU virt \(GICv2 \+ v2m frame at 0x8020000, MSI_SETSPI_NS 0x8020040, SPIs 80-143\), tcg, 4 CPUs,/m,
     'the machine: virt with a GICv2 and its v2m frame, 4 CPUs');
for my $dev (qw(edu e1000e nvme xhci)) {
	like($out, qr/^  PASS  \Q$dev\E\s+\S+ vector \d+ +\d+ raised, +\d+ handled on CPU \d \(SPI \d+\)(?:, \d+ repeats ignored)?$/m,
	     "GICv2m: $dev fired, each event on the CPU and SPI uMSI chose");
}
like($out, qr/^  PASS  ready line: arm64, "ctl":"gicv2m"/m, 'GICv2m: the ready line says so');
like($out, qr/^  PASS  (?:edu|e1000e) +\S+ migrated 300 times under fire/m, 'GICv2m: an IRQ migrated under fire');
like($out, qr/^  PASS  every vector: SPI = first SPI \+ identity/m, 'GICv2m: SPI per vector');
like($out, qr/^  PASS  monitor: messages decoded as \(MSI_SETSPI_NS 0x8020040, SPI\)$/m,
     'GICv2m: monitor: messages decoded as (MSI_SETSPI_NS, SPI)');
like($out, qr/^  PASS  QEMU trace: distributor \(QEMU trace\): each SPI aimed at its CPU only/m,
     'GICv2m: the distributor routes each SPI as uMSI says');
like($out, qr/^  PASS  CPU 3 \(MPIDR 0x3\) went offline and came back$/m, 'GICv2m: one CPU offline/online');
done_testing();
