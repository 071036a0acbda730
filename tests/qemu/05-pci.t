#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# Enumeration through ECAM across bridges, and BARs as the firmware left
# them: the kernel's list is compared with configuration space read
# through QEMU's monitor (xp over the ECAM window found in info mtree).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;
use UmsiCheck;

plan skip_all => 'qemu-system-x86_64 not installed' unless UmsiQemu::have_qemu();
plan skip_all => "$UmsiQemu::KERNEL not built (make kernel)" unless -f $UmsiQemu::KERNEL;

my @devices = ('-device', 'edu', '-device', 'nvme,serial=umsi,drive=d0',
	       '-drive', 'if=none,id=d0,file=/dev/null,format=raw,readonly=on',
	       '-device', 'pcie-root-port,id=rp1,chassis=1',
	       '-device', 'e1000e,bus=rp1',
	       '-device', 'pcie-root-port,id=rp2,chassis=2',
	       '-device', 'pcie-pci-bridge,id=br1,bus=rp2',
	       '-device', 'virtio-net-pci,bus=br1,addr=3');
my $r = UmsiQemu::run(smp => 2, hold => 1, devices => \@devices,
		      monitor => sub { UmsiCheck::snapshot(@_) });
is($r->{exit}, 'held', 'kernel reached the ready line and held');
my %seen = map { /^pci (\S+) ([0-9a-f]{4}:[0-9a-f]{4})/ ? ($1 => $2) : () } @{$r->{lines}};
is($seen{'0000:00:02.0'}, '1234:11e8', 'edu on the root bus');
is($seen{'0000:00:03.0'}, '1b36:0010', 'nvme on the root bus');
is($seen{'0000:01:00.0'}, '8086:10d3', 'e1000e behind a root port');
is($seen{'0000:03:03.0'}, '1af4:1000', 'virtio-net behind root port and PCIe-PCI bridge');
my $hw = $r->{monitor} // {};
is(scalar(keys %{$hw->{functions} // {}}), scalar(keys %seen),
   'monitor read every function the kernel listed');
for my $bdf (sort keys %seen) {
	my $f = $hw->{functions}{$bdf} or next;
	is(sprintf('%04x:%04x', $f->{vendor}, $f->{device}), $seen{$bdf},
	   "$bdf IDs agree with config space");
}
for my $res (UmsiCheck::check($hw, $r)) {
	next unless $res->[1] =~ /^BARs/;
	ok($res->[0], $res->[1]) or diag($res->[2]);
}
done_testing();
