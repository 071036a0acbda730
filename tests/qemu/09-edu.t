#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# Devices that fire: the kernel's edu driver takes one MSI vector (or INTx
# under pci_nomsi) through the driver API and makes each of three edu
# devices raise 200 interrupts, one outstanding at a time. Every event must
# produce exactly one handler call, on the CPU uMSI assigned; the monitor
# confirms the device state. Under KVM a level INTx is delivered a second
# time after release; the handler answers "not mine" and it is not counted.
# Last, the seed's IRQ numbering of msi_get_pci_irq_vector().
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
# The seed's msi_get_pci_irq_vector(): an edu alone on its INTx line (slot
# 3, GSI 23) keeps the line's number as its MSI IRQ; two sharing GSI 22
# (slots 2 and 6) get new numbers. All three fire exactly.
subtest 'tcg edu seed IRQ numbers' => sub {
	my $r = UmsiTest::run_checked(smp => 4,
		devices => [map { ('-device', $_) } 'edu,addr=3', 'edu,addr=2', 'edu,addr=6'],
		append => 'umsi.drivers=edu edu.mode=seed umsi.fire=50', name => 'edu seed');
	my %irq = map { $_->{bdf} => $_->{vectors}[0]{irq} } @{$r->{devices}};
	is(UmsiTest::kernel_gsi($r, '0000:00:03.0'), 23, 'slot 3 is alone on GSI 23');
	is($irq{'0000:00:03.0'}, 23, 'so its MSI IRQ is 23, the IO-APIC number');
	is(UmsiTest::kernel_gsi($r, '0000:00:02.0'), UmsiTest::kernel_gsi($r, '0000:00:06.0'),
	   'slots 2 and 6 share a GSI');
	ok($irq{'0000:00:02.0'} != 22 && $irq{'0000:00:06.0'} != 22 &&
	   $irq{'0000:00:02.0'} != $irq{'0000:00:06.0'}, 'so both get new, distinct IRQs');
	my @f = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
	is(scalar(grep { $_->{ok} && $_->{received} == 50 } @f), 3, 'all three fire exactly');
};
done_testing();
