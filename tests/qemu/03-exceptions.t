#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# An exception prints its name and the registers and exits with FAIL.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;

plan skip_all => 'qemu-system-x86_64 not installed' unless UmsiQemu::have_qemu();
plan skip_all => "$UmsiQemu::KERNEL not built (make kernel)" unless -f $UmsiQemu::KERNEL;

my $r = UmsiQemu::run(smp => 2, append => 'umsi.selftest=ud2');
is($r->{exit}, 'fail', 'ud2 ends the run with FAIL');
like($r->{serial}, qr/^EXCEPTION 6 \(#UD invalid opcode\) on cpu 0/m, 'exception named');
like($r->{serial}, qr/^  rip [0-9a-f]{16} cs 0008 /m, 'registers printed');
unlike($r->{serial}, qr/^UMSI \{"event":"ready"/m, 'no ready line after a crash');
done_testing();
