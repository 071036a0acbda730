#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# Devices that fire: e1000e in MSI-X mode (five vectors, each cause routed
# to its own vector through IVAR and raised through ICS, spread over CPUs)
# and in MSI mode (e1000e.mode=msi), on the root bus and behind a PCIe
# root port. Every raise must produce exactly one handler call that finds
# its cause, on the CPU uMSI chose; QEMU's occasional repeated message for
# a cause already cleared is answered "not mine" and reported apart.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();

my @devices = map { ('-device', $_) } ('e1000e,addr=2',
	'pcie-root-port,id=rp1,chassis=1,addr=7', 'e1000e,bus=rp1');
my $kvm = UmsiQemu::kvm_status();

for my $accel ('tcg', 'kvm') {
	for my $c (['', 'msix', 5], ['e1000e.mode=msi', 'msi', 1]) {
		my ($param, $mode, $nvec) = @$c;
	    SKIP: {
			if ($accel eq 'kvm' && $kvm ne 'yes') {
				UmsiQemu::skip_kvm(1);
				last SKIP;
			}
			subtest "$accel e1000e $mode" => sub {
				my $r = UmsiTest::run_checked(accel => $accel,
					smp => '6,sockets=2,cores=3', devices => \@devices,
					append => "umsi.drivers=e1000e umsi.fire=100 $param",
					name => "$accel e1000e $mode");
				my @fire = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
				for my $bdf ('0000:00:02.0', '0000:01:00.0') {
					my $d = UmsiTest::device($r, $bdf);
					is($d->{mode}, $mode, "$bdf in $mode mode");
					my @f = grep { $_->{bdf} eq $bdf } @fire;
					is(scalar @f, $nvec, "$bdf: $nvec vectors fired");
					is(scalar(grep { $_->{received} == 100 && $_->{sent} == 100 } @f),
					   $nvec, "$bdf: 100 raises, 100 handler calls per vector");
					is(scalar(grep { $_->{wrong_cpu} } @f), 0,
					   "$bdf: every call on the CPU uMSI chose");
					my %cpus = map { $_->{cpu} => 1 } @f;
					ok(keys(%cpus) == $nvec, "$bdf: vectors on $nvec different CPUs")
						if $nvec > 1;
				}
			};
		}
	}
}
done_testing();
