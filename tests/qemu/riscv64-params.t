#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# The riscv64 kernel with uMSI and the x86 kernel's boot parameters, on
# QEMU virt with the AIA, edu and e1000e behind pcie-root-ports:
#   - pci_nomsi: no function gets MSI or MSI-X; every one uses its INTA
#     through the S-level APLIC in MSI mode (aplic.c), msi_reason
#     policy:pci_nomsi, and the hardware (config space and the APLIC's
#     registers) agrees; edu and e1000e fire through it;
#   - device_nomsi=0x10d38086: only e1000e is refused (INTx), edu still
#     fires by MSI;
#   - umsi.offline=1,2 umsi.online=2 (-smp 4): harts leave through SBI HSM
#     hart_stop and one comes back through hart_start; no vector stays on
#     an offline hart, every event arrives once on the hart uMSI chose;
#   - umsi.migrate=300 (-smp 4): IRQs move between harts under fire, no
#     event lost.
# Each held run is checked through QEMU's monitor (UmsiCheck).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JSON::PP;
use UmsiQemu;
use UmsiCheck;

plan skip_all => "$UmsiQemu::RV_QEMU not installed"
	unless UmsiQemu::have_qemu('riscv64');
plan skip_all => "$UmsiQemu::RV_KERNEL not built (make kernel-riscv64)"
	unless -f $UmsiQemu::RV_KERNEL;
{
	my $r = UmsiQemu::run(arch => 'riscv64', smp => 1, timeout => 60);
	plan skip_all => 'riscv64 kernel linked without the uMSI library (IMSIC back end missing)'
		if $r->{serial} =~ /^umsi: library not linked/m;
}

my @devices = ('-device', 'pcie-root-port,id=rp0,chassis=1',
	       '-device', 'pcie-root-port,id=rp1,chassis=2',
	       '-device', 'edu,bus=rp0', '-device', 'e1000e,bus=rp1');
my ($EDU, $E1K) = ('0000:01:00.0', '0000:02:00.0');

sub held {
	my (%o) = @_;
	my $r = UmsiQemu::run(arch => 'riscv64', smp => $o{smp} // 2,
			      timeout => 180, hold => 1, devices => \@devices,
			      append => $o{append},
			      monitor => sub { UmsiCheck::snapshot(@_) });
	is($r->{exit}, 'held', "$o{append}: set-up completed and held")
		or diag($r->{serial});
	ok(!grep({ /EXCEPTION|PANIC|^check: / } @{$r->{lines}}),
	   "$o{append}: no crash, no kernel check failure");
	for my $res (UmsiCheck::check($r->{monitor}, $r)) {
		ok($res->[0], "$o{append}: monitor: $res->[1]") or diag($res->[2]);
	}
	return $r;
}

sub dev {
	my ($r, $bdf) = @_;
	return (grep { $_->{bdf} eq $bdf } @{$r->{devices}})[0] // {};
}

sub fires_ok {
	my ($r, $what) = @_;
	my @fire = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
	my @bad = grep { !$_->{ok} || $_->{wrong_cpu} || $_->{received} != $_->{sent} } @fire;
	ok(@fire && !@bad, "$what: every event once, on the chosen hart")
		or diag(join("\n", map { encode_json($_) } @bad));
	return @fire;
}

subtest 'pci_nomsi' => sub {
	my $r = held(append => 'pci_nomsi umsi.drivers=edu,e1000e umsi.probe=all');
	my @devs = @{$r->{devices}};
	is(scalar @devs, 4, 'four functions reported (two ports, edu, e1000e)');
	my @msi = grep { ($_->{mode} // '') ne 'intx' ||
			 ($_->{msi_reason} // '') ne 'policy:pci_nomsi' } @devs;
	ok(!@msi, 'every function: INTx through the APLIC, msi_reason policy:pci_nomsi')
		or diag(join("\n", map { encode_json($_) } @msi));
	my %gsi = map { $_->{gsi} => 1 } map { @{$_->{vectors} // []} } @devs;
	is($r->{ready}{allocated}, scalar keys %gsi,
	   'one identity allocated a line (' . scalar(keys %gsi) . ' lines, shared by a port and its device)');
};

subtest 'pci_nomsi: edu and e1000e fire through INTx' => sub {
	my $r = held(append => 'pci_nomsi umsi.drivers=edu,e1000e umsi.probe=all umsi.fire=10');
	my @fire = fires_ok($r, 'INTx');
	is_deeply([sort map { $_->{driver} } @fire], [qw(e1000e edu)], 'edu and e1000e fired');
};

subtest 'device_nomsi=0x10d38086' => sub {
	my $r = held(append => 'device_nomsi=0x10d38086 umsi.drivers=edu,e1000e umsi.fire=10');
	my $e = dev($r, $E1K);
	is($e->{mode}, 'intx', 'e1000e: no MSI, no MSI-X: INTx through the APLIC');
	is($e->{msi_reason}, 'policy:device_nomsi', 'e1000e: msi_reason policy:device_nomsi');
	is(dev($r, $EDU)->{mode}, 'msi', 'edu: MSI');
	my @fire = fires_ok($r, 'edu');
	is(scalar(grep { $_->{driver} eq 'edu' } @fire), 1, 'edu fired');
};

subtest 'umsi.offline=1,2 umsi.online=2 (-smp 4)' => sub {
	my $r = held(smp => 4,
		     append => 'umsi.drivers=edu,e1000e umsi.probe=all umsi.fire=10 '
			     . 'umsi.offline=1,2 umsi.online=2');
	my @cpu = grep { ($_->{event} // '') eq 'cpu' } @{$r->{umsi}};
	is_deeply([map { [$_->{cpu}, $_->{hart}, $_->{online} ? 1 : 0] } @cpu],
		  [[1, 1, 0], [2, 2, 0], [2, 2, 1]],
		  'cpu lines: 1 and 2 leave, 2 comes back (hart = cpu on virt)');
	ok(!grep({ $_->{error} } @cpu), 'no refusal');
	fires_ok($r, 'before, between and after');
	my %online = map { $_->{cpu} => $_->{online} } @{$r->{ready}{cpus} // []};
	is_deeply(\%online, { 0 => JSON::PP::true, 1 => JSON::PP::false,
			      2 => JSON::PP::true, 3 => JSON::PP::true },
		  'ready line: cpu 1 offline, the others online');
	my @on1 = grep { $_->{cpu} == 1 } map { @{$_->{vectors} // []} } @{$r->{devices}};
	ok(!@on1, 'no vector left on the offline hart');
	ok(grep({ /^cpu 2 hart 2 up, imsic file 0x28002000 delivering/ } @{$r->{lines}}) == 2,
	   'hart 2 started twice, its file delivering both times');
};

subtest 'umsi.migrate=300 (-smp 4)' => sub {
	my $r = held(smp => 4, append => 'umsi.drivers=edu,e1000e umsi.migrate=300');
	my @m = grep { ($_->{event} // '') eq 'migrate' } @{$r->{umsi}};
	is(scalar @m, 2, 'edu and e1000e migrated');
	my @bad = grep { !$_->{ok} || $_->{lost} || $_->{moved} != 300 } @m;
	ok(!@bad, '300 moves each, every event received, none lost')
		or diag(join("\n", map { encode_json($_) } @bad));
};

done_testing();
