#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# Multi-message MSI on hardware: nec-usb-xhci with msi=on,msix=off offers
# 16 messages (QEMU 7.2 ignores `intrs`); the kernel's driver enables all
# 16 as one 16-aligned block (the monitor check verifies Multiple Message
# Enable, alignment and destination), and 100 No Op commands, through a
# command-ring wrap, each complete with one event that arrives as message
# 0, on the CPU uMSI chose.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();

my $kvm = UmsiQemu::kvm_status();
for my $accel ('tcg', 'kvm') {
    SKIP: {
		if ($accel eq 'kvm' && $kvm ne 'yes') {
			UmsiQemu::skip_kvm(1);
			last SKIP;
		}
		subtest "$accel xhci" => sub {
			my $r = UmsiTest::run_checked(accel => $accel,
				smp => '6,sockets=2,cores=3',
				devices => ['-device', 'nec-usb-xhci,msi=on,msix=off,addr=4'],
				append => 'umsi.drivers=xhci umsi.fire=100',
				name => "$accel xhci");
			my $d = UmsiTest::device($r, '0000:00:04.0');
			is($d->{mode}, 'msi', 'xhci in MSI mode');
			is($d->{reserved}, 16, 'a block of 16 messages');
			is(scalar @{$d->{vectors} // []}, 16, '16 vectors listed');
			my ($f) = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
			$f //= {};
			is($f->{index}, 0, 'command completions arrive as message 0');
			is($f->{received}, 100, '100 commands, 100 handler calls');
			is($f->{wrong_cpu}, 0, 'on the CPU uMSI chose');
			my ($x) = grep { ($_->{event} // '') eq 'xhci' } @{$r->{umsi}};
			is($x->{bad_events}, 0, 'every event a successful command completion');
		};
	}
}
done_testing();
