#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# Multi-message MSI on hardware: nec-usb-xhci with msi=on,msix=off offers
# 16 messages (QEMU 7.2 ignores `intrs`); the kernel's driver asks for all
# 16 (umsi.probe_max=16 lifts the kernel's cap of one per CPU plus one,
# 7 here) and enables them as one 16-aligned block (the monitor check verifies Multiple Message
# Enable, alignment and destination), and 100 No Op commands, through a
# command-ring wrap, each complete with one event that arrives as message
# 0, on the CPU uMSI chose. With a USB keyboard attached, the driver
# addresses it and sends GET_DESCRIPTOR transfers aimed at interrupters
# 1-15: each Transfer Event arrives as that message (interrupter k is
# message k), exactly once, and the descriptor read is a device
# descriptor.
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
			UmsiQemu::skip_kvm(2);
			last SKIP;
		}
		subtest "$accel xhci" => sub {
			my $r = UmsiTest::run_checked(accel => $accel,
				smp => '6,sockets=2,cores=3',
				devices => ['-device', 'nec-usb-xhci,msi=on,msix=off,addr=4'],
				append => 'umsi.drivers=xhci umsi.probe_max=16 umsi.fire=100',
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
		subtest "$accel xhci with a USB device: messages 1-15" => sub {
			my $r = UmsiTest::run_checked(accel => $accel,
				smp => '6,sockets=2,cores=3',
				devices => ['-device', 'nec-usb-xhci,id=xhci,msi=on,msix=off,addr=4',
					    '-device', 'usb-kbd,bus=xhci.0'],
				append => 'umsi.drivers=xhci umsi.probe_max=16 umsi.fire=20',
				name => "$accel xhci+kbd");
			my @f = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
			is_deeply([map { $_->{index} } @f], [0 .. 15], 'all 16 messages fired');
			is(scalar(grep { $_->{ok} && $_->{received} == $_->{sent} } @f), 16,
			   'each event one handler call, on its CPU');
			my ($x) = grep { ($_->{event} // '') eq 'xhci' } @{$r->{umsi}};
			$x //= {};
			ok($x->{slot}, 'the keyboard got a slot');
			is($x->{transfers}, 15 * 20, '300 transfers completed');
			is($x->{descriptor}, '0x0112', 'a device descriptor (18 bytes, type 1)');
			is($x->{bad_events}, 0, 'every event the expected kind, successful');
		};
	}
}
done_testing();
