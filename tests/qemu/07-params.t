#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# Boot parameters from the multiboot command line, with umsi.probe=all:
# pci_nomsi and pci=nomsi send every device to INTx, device_nomsi= only
# the listed ones, pci_msi=specific with device_msi= allows only the
# listed ones. The monitor check confirms each device's real state and
# the INTx GSI is the one the kernel's q35 routing gives.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();

my @devices = map { ('-device', $_) } (
	'e1000e,addr=2', 'virtio-net-pci,vectors=4,addr=4', 'edu,addr=5');
my %dev = ('0000:00:02.0' => 'e1000e', '0000:00:04.0' => 'virtio-net',
	   '0000:00:05.0' => 'edu');
my %msi_mode = ('0000:00:02.0' => 'msix', '0000:00:04.0' => 'msix',
		'0000:00:05.0' => 'msi');

my @cases = (
	['pci_nomsi', { map { $_ => 'intx' } keys %dev }, 'policy:pci_nomsi'],
	['pci=nomsi', { map { $_ => 'intx' } keys %dev }, 'policy:pci_nomsi'],
	['device_nomsi=0x10d38086',
	 { %msi_mode, '0000:00:02.0' => 'intx' }, 'policy:device_nomsi'],
	['device_nomsi=0x10d38086,0x11e81234',
	 { %msi_mode, '0000:00:02.0' => 'intx', '0000:00:05.0' => 'intx' },
	 'policy:device_nomsi'],
	['pci_msi=specific device_msi=0x10d38086',
	 { map({ $_ => 'intx' } keys %dev), '0000:00:02.0' => 'msix' },
	 'policy:not_listed'],
	['', { %msi_mode }, undef],
);

for my $c (@cases) {
	my ($param, $modes, $reason) = @$c;
	subtest "tcg '$param'" => sub {
		my $r = UmsiTest::run_checked(smp => 4, devices => \@devices,
			append => "umsi.probe=all $param", name => $param || 'no policy');
		for my $bdf (sort keys %$modes) {
			my $d = UmsiTest::device($r, $bdf);
			is($d->{mode}, $modes->{$bdf}, "$dev{$bdf} mode $modes->{$bdf}");
			next unless $modes->{$bdf} eq 'intx';
			my $v = ($d->{vectors} // [])->[0] // {};
			is($v->{gsi}, UmsiTest::kernel_gsi($r, $bdf),
			   "$dev{$bdf} INTx on the q35 GSI");
			is($v->{pin}, 'A', "$dev{$bdf} pin A");
			is($d->{msi_reason}, $reason, "$dev{$bdf} msi_reason $reason")
				if defined $reason;
		}
	};
}
done_testing();
