#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# umsi.probe=all on a machine with e1000e, nvme, virtio-net-pci with many
# vectors, edu, and an e1000e behind a pcie-root-port, on 6 CPUs with gaps
# in their APIC IDs: every function with MSI or MSI-X gets what it offers
# (MSI-X, else MSI; xhci's 16 MSI messages as one aligned block), and the
# monitor shows each device programmed exactly
# as its UMSI line says.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();

my @devices = map { ('-device', $_) } (
	'e1000e,addr=2', 'nvme,serial=umsi,drive=d0,addr=3',
	'virtio-net-pci,vectors=12,addr=4', 'edu,addr=5',
	'pcie-root-port,id=rp1,chassis=1,addr=6', 'e1000e,bus=rp1',
	'nec-usb-xhci,msi=on,msix=off,addr=8');
push @devices, '-drive', 'if=none,id=d0,file=/dev/null,format=raw,readonly=on';
my $kvm = UmsiQemu::kvm_status();

for my $accel ('tcg', 'kvm') {
    SKIP: {
		if ($accel eq 'kvm' && $kvm ne 'yes') {
			UmsiQemu::skip_kvm(1);
			last SKIP;
		}
		subtest "$accel umsi.probe=all" => sub {
			my $r = UmsiTest::run_checked(accel => $accel,
				smp => '6,sockets=2,cores=3', devices => \@devices,
				append => 'umsi.probe=all', name => "$accel probe=all");
			my %want = (
				'0000:00:02.0' => ['msix', 5],	# e1000e
				'0000:00:03.0' => ['msix', 65],	# nvme: 64 I/O + admin
				'0000:00:04.0' => ['msix', 12],	# virtio-net vectors=12
				'0000:00:05.0' => ['msi', 1],	# edu
				'0000:01:00.0' => ['msix', 5],	# e1000e behind the port
				'0000:00:08.0' => ['msi', 16],	# xhci: multi-message
			);
			for my $bdf (sort keys %want) {
				my $d = UmsiTest::device($r, $bdf);
				is($d->{mode}, $want{$bdf}[0], "$bdf mode $want{$bdf}[0]");
				is(scalar @{$d->{vectors} // []}, $want{$bdf}[1],
				   "$bdf has $want{$bdf}[1] vectors");
			}
			is(UmsiTest::device($r, '0000:00:08.0')->{reserved}, 16,
			   'xhci: a block of 16 reserved');
			my $smbus = UmsiTest::device($r, '0000:00:1f.3');
			is($smbus->{mode}, 'none', 'SMBus (INTx only): mode none');
			is($smbus->{reason}, 'no_capability', 'SMBus: reason no_capability');
			my %cpus;
			$cpus{$_->{cpu}}++ for map { @{$_->{vectors}} }
				UmsiTest::device($r, '0000:00:03.0');
			ok(keys(%cpus) > 1, 'nvme vectors spread over several CPUs');
			my %ids = map { $_->{cpu} => $_->{apic_id} } @{$r->{ready}{cpus} // []};
			my @wrong = grep { $ids{$_->{cpu}} != $_->{apic_id} }
				map { @{$_->{vectors} // []} } @{$r->{devices}};
			is(scalar @wrong, 0, 'every vector names the APIC ID of its CPU');
		};
	}
}
done_testing();
