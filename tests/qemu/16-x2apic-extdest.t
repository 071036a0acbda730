#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# APIC IDs above 255 (KVM only): three sockets of 96 cores, with CPUs
# plugged at socket 1 core 95 (APIC ID 223) and socket 2 core 3 (APIC ID
# 259), split irqchip so KVM advertises the extended destination ID. The
# kernel runs x2APIC; messages to CPU 2 carry destination 259 (bits 7:0 in
# address 19:12, bits 14:8 in address 11:5), as the monitor's MSI-X table
# shows, and they arrive there, also while IRQs migrate.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();

my $kvm = UmsiQemu::kvm_status();
SKIP: {
	if ($kvm ne 'yes') {
		UmsiQemu::skip_kvm(1);
		last SKIP;
	}
	subtest 'kvm x2apic, APIC ID 259' => sub {
		my $r = UmsiTest::run_checked(accel => 'kvm',
			machine => 'q35,kernel-irqchip=split',
			smp => '1,sockets=3,cores=96,threads=1,maxcpus=288',
			devices => ['-device', 'host-x86_64-cpu,socket-id=1,core-id=95,thread-id=0',
				    '-device', 'host-x86_64-cpu,socket-id=2,core-id=3,thread-id=0',
				    '-device', 'e1000e,addr=2', '-device', 'edu,addr=3'],
			append => 'umsi.apic=x2apic umsi.drivers=all umsi.fire=50 umsi.migrate=200',
			name => 'kvm extdest');
		is_deeply([map { $_->{apic_id} } @{$r->{ready}{cpus} // []}], [0, 223, 259],
			  'CPUs with APIC IDs 0, 223, 259');
		is($r->{ready}{apic}, 'x2apic', 'x2APIC mode');
		my @v = map { @{$_->{vectors} // []} } @{$r->{devices}};
		ok(scalar(grep { $_->{apic_id} == 259 } @v), 'some vector targets APIC ID 259');
		my @f = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
		is(scalar(grep { !$_->{ok} } @f), 0, 'every vector fired exactly, on its CPU');
		ok(scalar(grep { $_->{cpu} == 2 && $_->{ok} } @f), 'interrupts arrived on the CPU with APIC ID 259');
		my @m = grep { ($_->{event} // '') eq 'migrate' } @{$r->{umsi}};
		is(scalar(grep { $_->{ok} } @m), 2, 'both IRQs migrated under fire without loss');
	};
}
done_testing();
