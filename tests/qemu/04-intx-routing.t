#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# The q35 INTx routing the kernel gives uMSI (kernel/common/pci.c) against what
# QEMU does: edu devices raise INTx (MSI off) in root-bus slots 0-24
# (PIRQ E-H by (slot + pin) % 4), slot 25 and 28 (D25IR/D28IR: PIRQ A-D),
# slot 30 (PIRQ E-H), behind PCIe root ports, behind a PCIe-to-PCI bridge
# at several device numbers (the swizzle), and behind a PCI-PCI bridge.
# Then the same below a PCIe expander bridge (pxb-pcie, root bus 0x80) in
# slot 9 of bus 0: QEMU cancels the expander's slot in a flat table
# lookup (see pci_intx_gsi), so root ports 0-3 and a PCIe-to-PCI bridge
# cover every case of that arithmetic.
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
my @pxb = ('-device', 'pxb-pcie,id=pxb1,bus_nr=0x80,addr=9',
	   map { ('-device', "pcie-root-port,id=xp$_,bus=pxb1,chassis=" . (10 + $_) . ",addr=$_",
		  '-device', "edu,bus=xp$_") } 0 .. 3);
push @pxb, map { ('-device', $_) } ('pcie-root-port,id=xp5,bus=pxb1,chassis=20,addr=5',
	'pcie-pci-bridge,id=xbr,bus=xp5', 'edu,bus=xbr,addr=1', 'edu,bus=xbr,addr=2');
my $kvm = UmsiQemu::kvm_status();

for my $accel ('tcg', 'kvm') {
    SKIP: {
		if ($accel eq 'kvm' && $kvm ne 'yes') {
			UmsiQemu::skip_kvm(2);
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
		subtest "$accel intx routing below a pxb-pcie expander" => sub {
			my $r = UmsiQemu::run(accel => $accel, smp => 2,
					      append => 'umsi.selftest=intx',
					      devices => \@pxb);
			is($r->{exit}, 'pass', 'kernel exits with PASS');
			my @l = grep { /^selftest intx / } @{$r->{lines}};
			is(scalar @l, 6, 'six edu functions on buses 0x81-0x86 tried');
			for (@l) {
				like($_, qr/ ok$/, $_);
			}
			diag($r->{serial}) unless $r->{exit} eq 'pass';
		};
	}
}
done_testing();
