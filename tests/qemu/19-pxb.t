#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# Devices behind an extra host bridge: a PCIe expander (pxb-pcie) in slot
# 9 of bus 0 opens root bus 0x80, with three root ports: an e1000e on bus
# 0x81, an nvme on 0x82, and a PCIe-to-PCI bridge (0x83) with an edu on
# 0x84. Firmware assigns their BARs; the kernel finds the root bus by
# scanning every bus of the ECAM window that no bridge leads to. Then the
# drivers fire: e1000e MSI-X, nvme MSI-X with verified reads, and edu on
# its INTx line (device_nomsi=), routed as QEMU routes an expander's
# pins; umsi.probe=all serves the root ports and the PCIe-PCI bridge.
# The monitor confirms every function's programming and BARs.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempfile);
use Test::More;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();

my ($fh, $img) = tempfile('umsi-pxb-XXXXXX', TMPDIR => 1, UNLINK => 1, SUFFIX => '.img');
binmode($fh);
print $fh pack('a4 V x504', 'UMSI', $_) for 0 .. 255;
close($fh);

my @devices = ('-drive', "if=none,id=d0,file=$img,format=raw", map { ('-device', $_) } (
	'pxb-pcie,id=pxb1,bus_nr=0x80,addr=9',
	'pcie-root-port,id=xp0,bus=pxb1,chassis=10,addr=0', 'e1000e,bus=xp0',
	'pcie-root-port,id=xp1,bus=pxb1,chassis=11,addr=1', 'nvme,serial=umsi,drive=d0,bus=xp1',
	'pcie-root-port,id=xp2,bus=pxb1,chassis=12,addr=2', 'pcie-pci-bridge,id=xbr,bus=xp2',
	'edu,bus=xbr,addr=3'));
my %want = ('0000:80:00.0' => ['1b36:000c', 'msix'], '0000:80:01.0' => ['1b36:000c', 'msix'],
	    '0000:80:02.0' => ['1b36:000c', 'msix'], '0000:81:00.0' => ['8086:10d3', 'msix'],
	    '0000:82:00.0' => ['1b36:0010', 'msix'], '0000:83:00.0' => ['1b36:000e', 'msi'],
	    '0000:84:03.0' => ['1234:11e8', 'intx']);
my $kvm = UmsiQemu::kvm_status();

for my $accel ('tcg', 'kvm') {
    SKIP: {
		if ($accel eq 'kvm' && $kvm ne 'yes') {
			UmsiQemu::skip_kvm(1);
			last SKIP;
		}
		subtest "$accel pxb-pcie root bus 0x80" => sub {
			my $r = UmsiTest::run_checked(accel => $accel, smp => 4,
				devices => \@devices, name => "$accel pxb",
				append => 'umsi.drivers=all umsi.probe=all umsi.fire=20 device_nomsi=0x11e81234');
			ok(grep({ /^pci: root bus 80 / } @{$r->{lines}}), 'root bus 0x80 found');
			my %seen = map { /^pci (\S+) ([0-9a-f]{4}:[0-9a-f]{4})/ ? ($1 => $2) : () }
				@{$r->{lines}};
			for my $bdf (sort keys %want) {
				is($seen{$bdf}, $want{$bdf}[0], "$bdf ($want{$bdf}[0]) enumerated");
				is(UmsiTest::device($r, $bdf)->{mode}, $want{$bdf}[1],
				   "$bdf in $want{$bdf}[1] mode");
			}
			my @bars = grep { /^pci 0000:8[0-4]:\S+ bar / } @{$r->{lines}};
			cmp_ok(scalar @bars, '>=', 7, 'their BARs listed (checked against config space)');
			ok(!grep({ / unassigned$/ } @bars), 'every BAR below the expander assigned');
			my @f = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
			is(scalar(grep { $_->{bdf} eq '0000:81:00.0' && $_->{ok} } @f), 5,
			   'e1000e: 5 MSI-X vectors fired, each event one handler call on its CPU');
			is(scalar(grep { $_->{bdf} eq '0000:82:00.0' && $_->{ok} } @f), 5,
			   'nvme: admin + 4 I/O vectors fired');
			my ($e) = grep { $_->{bdf} eq '0000:84:03.0' } @f;
			ok($e && $e->{ok} && $e->{received} == 20,
			   'edu: 20 INTx interrupts through the expander, one handler call each');
			my ($n) = grep { ($_->{event} // '') eq 'nvme' } @{$r->{umsi}};
			is($n->{bad_reads}, 0, 'every nvme read returned its sector');
			is($n->{reads}, 80, '80 reads');
		};
	}
}
done_testing();
