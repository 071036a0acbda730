#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# The q35 INTx routing the kernel gives uMSI (kernel/pci.c) against what
# QEMU does: edu devices raise INTx (MSI off) in root-bus slots 0-24
# (PIRQ E-H by (slot + pin) % 4), slot 25 and 28 (D25IR/D28IR: PIRQ A-D),
# slot 30 (PIRQ E-H), behind PCIe root ports, behind a PCIe-to-PCI bridge
# at several device numbers (the swizzle), and behind a PCI-PCI bridge.
# The kernel routes GSI 16-23 to eight vectors and reports which fired.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;

plan skip_all => 'qemu-system-x86_64 not installed' unless UmsiQemu::have_qemu();
plan skip_all => "$UmsiQemu::KERNEL not built (make kernel)" unless -f $UmsiQemu::KERNEL;

my @devices = map { ('-device', $_) } (
	'edu,addr=2', 'edu,addr=5', 'edu,addr=0x19', 'edu,addr=0x1e',
	'pcie-root-port,id=rp1,chassis=1,addr=6', 'edu,bus=rp1',
	'pcie-root-port,id=rp2,chassis=2,addr=0x1c',
	'pcie-pci-bridge,id=br1,bus=rp2',
	'edu,bus=br1,addr=1', 'edu,bus=br1,addr=2', 'edu,bus=br1,addr=7',
	'pci-bridge,id=pb,chassis_nr=3,addr=9', 'edu,bus=pb,addr=3',
);
my $kvm = UmsiQemu::kvm_status();

for my $accel ('tcg', 'kvm') {
    SKIP: {
		if ($accel eq 'kvm' && $kvm ne 'yes') {
			UmsiQemu::skip_kvm(1);
			last SKIP;
		}
		subtest "$accel intx routing" => sub {
			my $r = UmsiQemu::run(accel => $accel, smp => 2,
					      append => 'umsi.selftest=intx',
					      devices => \@devices);
			is($r->{exit}, 'pass', 'kernel exits with PASS');
			my @l = grep { /^selftest intx / } @{$r->{lines}};
			is(scalar @l, 9, "nine edu functions tried");
			for (@l) {
				like($_, qr/ ok$/, $_);
			}
			diag($r->{serial}) unless $r->{exit} eq 'pass';
		};
	}
}
done_testing();
