#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# Devices that fire: the kernel's edu driver takes one MSI vector (or INTx
# under pci_nomsi) through the driver API and makes each of three edu
# devices raise 200 interrupts, one outstanding at a time. Every event must
# produce exactly one handler call, on the CPU uMSI assigned; the monitor
# confirms the device state. Under KVM a level INTx is delivered a second
# time after release; the handler answers "not mine" and it is not counted.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();

my @devices = map { ('-device', $_) } ('edu,addr=5', 'edu,addr=6',
	'pcie-root-port,id=rp1,chassis=1,addr=7', 'edu,bus=rp1');
my @edus = ('0000:00:05.0', '0000:00:06.0', '0000:01:00.0');
my $kvm = UmsiQemu::kvm_status();

for my $accel ('tcg', 'kvm') {
	for my $c (['', 'msi'], ['pci_nomsi', 'intx']) {
		my ($param, $mode) = @$c;
	    SKIP: {
			if ($accel eq 'kvm' && $kvm ne 'yes') {
				UmsiQemu::skip_kvm(1);
				last SKIP;
			}
			subtest "$accel edu $mode" => sub {
				my $r = UmsiTest::run_checked(accel => $accel,
					smp => '6,sockets=2,cores=3', devices => \@devices,
					append => "umsi.drivers=edu umsi.fire=200 $param",
					name => "$accel edu $mode");
				my @fire = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
				is(scalar @fire, 3, 'three edu vectors fired');
				for my $bdf (@edus) {
					is(UmsiTest::device($r, $bdf)->{mode}, $mode, "$bdf in $mode mode");
					my ($f) = grep { $_->{bdf} eq $bdf } @fire;
					$f //= {};
					is($f->{received}, 200, "$bdf: 200 sent, 200 handler calls");
					is($f->{wrong_cpu}, 0, "$bdf: all on the CPU uMSI chose");
				}
			};
		}
	}
}
done_testing();
