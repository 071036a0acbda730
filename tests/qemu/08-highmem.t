#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# A 64-bit BAR the firmware put above 4 GiB (ivshmem with 2 GiB of shared
# memory) is mapped on demand: the kernel writes 'UMSI' at the first and
# last word of the BAR and the monitor reads the same words back.
use strict;
use warnings;
no warnings 'portable';	# 64-bit hex addresses
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;

plan skip_all => 'qemu-system-x86_64 not installed' unless UmsiQemu::have_qemu();
plan skip_all => "$UmsiQemu::KERNEL not built (make kernel)" unless -f $UmsiQemu::KERNEL;

my $r = UmsiQemu::run(smp => 1, append => 'umsi.selftest=highmem', hold => 1,
	devices => ['-object', 'memory-backend-ram,id=m,size=2G',
		    '-device', 'ivshmem-plain,memdev=m'],
	monitor => sub {
		my ($mon, $text) = @_;
		my ($lo, $hi) = $text =~ /^selftest highmem \S+ bar \d 0x([0-9a-f]+)-0x([0-9a-f]+)/m
			or return {};
		return { first => ($mon->read32(hex($lo), 1))[0],
			 last => ($mon->read32(hex($hi) - 3, 1))[0], base => hex($lo) };
	});
is($r->{exit}, 'held', 'kernel ran the self-test and held');
like($r->{serial}, qr/^selftest highmem: ok$/m, 'kernel read back what it wrote');
ok(($r->{monitor}{base} // 0) >= 2**32, 'the BAR is above 4 GiB');
is($r->{monitor}{first}, 0x49534d55, 'monitor sees UMSI at the first word');
is($r->{monitor}{last}, 0x49534d55, 'monitor sees UMSI at the last word');
done_testing();
