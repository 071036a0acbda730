#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# The kernel boots on 1, 4 and 6 CPUs (the last with gaps in its APIC IDs:
# two sockets of three cores are APIC IDs 0,1,2 and 4,5,6), starts every
# AP, and each CPU answers a cross-call with the APIC ID the MADT gave it.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;

plan skip_all => 'qemu-system-x86_64 not installed' unless UmsiQemu::have_qemu();
plan skip_all => "$UmsiQemu::KERNEL not built (make kernel)" unless -f $UmsiQemu::KERNEL;

my @cases = (
	[ '1', [0] ],
	[ '4', [0, 1, 2, 3] ],
	[ '6,sockets=2,cores=3', [0, 1, 2, 4, 5, 6] ],
);
my $kvm = UmsiQemu::kvm_status();

for my $accel ('tcg', 'kvm') {
	for my $c (@cases) {
		my ($smp, $ids) = @$c;
		my $name = "$accel -smp $smp";
	    SKIP: {
			if ($accel eq 'kvm' && $kvm ne 'yes') {
				UmsiQemu::skip_kvm(1);
				last SKIP;
			}
			subtest $name => sub {
				my $r = UmsiQemu::run(accel => $accel, smp => $smp);
				is($r->{exit}, 'pass', 'kernel exits with PASS');
				ok($r->{ready}, 'UMSI ready line');
				is_deeply([map { $_->{apic_id} } @{$r->{ready}{cpus} // []}],
					  $ids, 'CPUs and APIC IDs in MADT order');
				is(scalar(grep { !$_->{online} } @{$r->{ready}{cpus} // []}),
				   0, 'every CPU online');
				my @x = grep { /^cpu \d+ apic_id \d+ online xcall .* ok$/ } @{$r->{lines}};
				is(scalar @x, scalar @$ids, 'every CPU answers a cross-call as itself');
				ok(!grep({ /EXCEPTION|PANIC/ } @{$r->{lines}}), 'no exception or panic');
				diag($r->{serial}) unless $r->{exit} eq 'pass';
			};
		}
	}
}
done_testing();
