#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# umsi.apic= chooses the local APIC mode. QEMU 7.2's TCG has no x2APIC:
# auto falls back to xAPIC there and an explicit x2apic request fails
# cleanly; x2APIC itself is tested under KVM only, and is a SKIP (never a
# pass) when KVM is not usable. Fixed IPIs reach every CPU in each mode.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;

plan skip_all => 'qemu-system-x86_64 not installed' unless UmsiQemu::have_qemu();
plan skip_all => "$UmsiQemu::KERNEL not built (make kernel)" unless -f $UmsiQemu::KERNEL;

my $kvm = UmsiQemu::kvm_status();
my $why = 'kvm not usable: ' . ($kvm =~ s/^no: //r);
my $gapped = '6,sockets=2,cores=3';

sub boots_in_mode {
	my ($accel, $param, $mode) = @_;
	my $r = UmsiQemu::run(accel => $accel, smp => $gapped,
			      append => "umsi.apic=$param umsi.selftest=ipi");
	is($r->{exit}, 'pass', "$accel umsi.apic=$param: PASS");
	like($r->{serial}, qr/^apic: \Q$mode\E mode/m, "$accel umsi.apic=$param: $mode mode");
	is(scalar(grep { /^selftest ipi cpu \d+ apic_id \d+ ok$/ } @{$r->{lines}}), 6,
	   "$accel umsi.apic=$param: a fixed IPI reaches each of 6 CPUs");
	diag($r->{serial}) unless $r->{exit} eq 'pass';
}

boots_in_mode('tcg', 'xapic', 'xapic');
boots_in_mode('tcg', 'auto', 'xapic');

my $r = UmsiQemu::run(accel => 'tcg', append => 'umsi.apic=x2apic');
is($r->{exit}, 'fail', 'tcg umsi.apic=x2apic: FAIL, not a silent fallback');
like($r->{serial}, qr/^UMSI \{"event":"error","reason":"x2APIC requested/m,
     'tcg umsi.apic=x2apic: the reason is reported');

SKIP: {
	if ($kvm ne 'yes') {
		UmsiQemu::skip_kvm(6);
		last SKIP;
	}
	boots_in_mode('kvm', 'x2apic', 'x2apic');
	boots_in_mode('kvm', 'xapic', 'xapic');
}
done_testing();
