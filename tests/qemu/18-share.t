#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# The probe policy shares the vectors (kernel/common/glue_share.c), on 4 CPUs
# (796 allocatable vectors):
#  1. the issue's machine: an nvme with a 2048-entry MSI-X table before
#     the AHCI controller, umsi.probe=all: the AHCI still gets its MSI
#     vector, the nvme every other vector, "short":"share";
#  2. with virtio-net (300), xhci (16 MSI messages), edu, and the AHCI
#     kept to INTx by device_nomsi=: every function gets what it offers,
#     the AHCI its INTx line, the nvme what remains ("share");
#  3. drivers (nvme, xhci) get one vector per CPU plus one ("cpus") and
#     still work (umsi.fire), next to a probed virtio-net that gets all
#     300;
#  4. umsi.probe_max=12 caps drivers and probed devices alike
#     ("probe_max"), the xhci block then being 16 with 12 used.
# Every machine is checked against the monitor: each function's MSI,
# MSI-X or IO-APIC entry as its line says, no (APIC ID, vector) twice.
# Under TCG, and again under KVM when usable.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();

my @nvme = ('-device', 'nvme,serial=umsi,drive=d0,addr=3,msix_qsize=2048',
	    '-drive', 'if=none,id=d0,file=/dev/null,format=raw,readonly=on');
my @zoo = (@nvme, map { ('-device', $_) } ('virtio-net-pci,vectors=300,addr=4',
	   'nec-usb-xhci,msi=on,msix=off,addr=5', 'edu,addr=6'));
my ($NVME, $VNET, $XHCI, $EDU, $AHCI) =
	('0000:00:03.0', '0000:00:04.0', '0000:00:05.0', '0000:00:06.0', '0000:00:1f.2');

sub vecs { return scalar @{$_[0]{vectors} // []}; }

# Every function with MSI or MSI-X has at least one vector (MSI, MSI-X or
# its INTx line); a shortfall always has a reason.
sub nobody_starved {
	my ($r) = @_;
	my @starved = grep { ($_->{msi_cap} || $_->{msix_cap}) &&
			     ($_->{mode} eq 'none' || !vecs($_)) } @{$r->{devices}};
	is(scalar @starved, 0, 'every function with MSI or MSI-X has a vector')
		or diag(join(', ', map { "$_->{bdf} $_->{mode}" } @starved));
	my @silent = grep { $_->{want} && vecs($_) < $_->{want} && !$_->{short} }
		@{$r->{devices}};
	is(scalar @silent, 0, 'every shortfall says why')
		or diag(join(', ', map { $_->{bdf} } @silent));
}

for my $accel (UmsiQemu::accels()) {
	subtest "$accel: nvme 2048 before the AHCI" => sub {
		my $r = UmsiTest::run_checked(accel => $accel, smp => 4, devices => \@nvme,
			append => 'umsi.probe=all', name => "$accel nvme+ahci");
		my ($n, $a) = map { UmsiTest::device($r, $_) } ($NVME, $AHCI);
		is($a->{mode}, 'msi', 'AHCI in MSI mode');
		is(vecs($a), 1, 'AHCI has its vector');
		is($n->{want}, 2048, 'nvme wants its whole table');
		is($n->{short}, 'share', 'nvme is cut to leave the others theirs');
		cmp_ok(vecs($n), '>', 700, 'nvme has every other vector (' . vecs($n) . ')');
		nobody_starved($r);
	};

	subtest "$accel: the zoo with the AHCI on INTx" => sub {
		my $r = UmsiTest::run_checked(accel => $accel, smp => 4, devices => \@zoo,
			append => 'umsi.probe=all device_nomsi=0x29228086', name => "$accel zoo");
		my %d = map { $_ => UmsiTest::device($r, $_) } ($NVME, $VNET, $XHCI, $EDU, $AHCI);
		is($d{$AHCI}{mode}, 'intx', 'AHCI on its INTx line');
		is($d{$AHCI}{msi_reason}, 'policy:device_nomsi', 'as device_nomsi= says');
		is(vecs($d{$AHCI}), 1, 'the line has its vector');
		is(vecs($d{$VNET}), 300, 'virtio-net gets all 300');
		is($d{$XHCI}{reserved}, 16, 'xhci gets its 16-message block');
		is(vecs($d{$EDU}), 1, 'edu gets its message');
		is($d{$NVME}{short}, 'share', 'nvme takes what is left');
		cmp_ok(vecs($d{$NVME}), '>', 300, 'and that is more than any other (' .
		       vecs($d{$NVME}) . ')');
		nobody_starved($r);
	};

	subtest "$accel: drivers: one vector per CPU plus one" => sub {
		my $r = UmsiTest::run_checked(accel => $accel, smp => 4, devices => \@zoo,
			append => 'umsi.drivers=nvme,xhci umsi.probe=all umsi.fire=5',
			name => "$accel drivers");
		my %d = map { $_ => UmsiTest::device($r, $_) } ($NVME, $VNET, $XHCI);
		is($d{$NVME}{driver}, 'nvme', 'nvme driven');
		is(vecs($d{$NVME}), 5, 'nvme: admin + 4 I/O vectors');
		is($d{$NVME}{short}, 'cpus', 'nvme: cut to the CPUs');
		is(vecs($d{$XHCI}), 5, 'xhci: 5 interrupters');
		is($d{$XHCI}{reserved}, 8, 'xhci: in a block of 8');
		is($d{$XHCI}{short}, 'cpus', 'xhci: cut to the CPUs');
		is(vecs($d{$VNET}), 300, 'probed virtio-net gets all 300');
		my @f = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
		cmp_ok(scalar @f, '>=', 6, 'driven vectors fired');
		is(scalar(grep { !$_->{ok} } @f), 0, 'each event one handler call, on its CPU');
		nobody_starved($r);
	};

	subtest "$accel: umsi.probe_max=12" => sub {
		my $r = UmsiTest::run_checked(accel => $accel, smp => 4, devices => \@zoo,
			append => 'umsi.drivers=nvme,xhci umsi.probe=all umsi.probe_max=12 umsi.fire=5',
			name => "$accel probe_max");
		my %d = map { $_ => UmsiTest::device($r, $_) } ($NVME, $VNET, $XHCI);
		for my $bdf ($NVME, $VNET, $XHCI) {
			is(vecs($d{$bdf}), 12, "$bdf: 12 vectors");
			is($d{$bdf}{short}, 'probe_max', "$bdf: cut by umsi.probe_max");
		}
		is($d{$XHCI}{reserved}, 16, 'xhci: 12 used of a 16-message block');
		my @f = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
		is(scalar(grep { !$_->{ok} } @f), 0, 'each event one handler call, on its CPU');
		nobody_starved($r);
	};
}
done_testing();
