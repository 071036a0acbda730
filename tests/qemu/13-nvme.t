#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# nvme (MSI-X only, 65 entries): the kernel's driver takes the admin
# vector and one vector per I/O queue pair (up to four), creates the I/O
# completion queues with those MSI-X table entries as their interrupt
# vectors, and completes real one-sector reads from a small drive image
# whose sectors carry their own number. Every command completes with
# exactly one handler call on the CPU uMSI chose, and every read returns
# the right sector.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempfile);
use Test::More;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();

my ($fh, $img) = tempfile('umsi-nvme-XXXXXX', TMPDIR => 1, UNLINK => 1, SUFFIX => '.img');
binmode($fh);
print $fh pack('a4 V x504', 'UMSI', $_) for 0 .. 255;
close($fh);

my $kvm = UmsiQemu::kvm_status();
for my $accel ('tcg', 'kvm') {
    SKIP: {
		if ($accel eq 'kvm' && $kvm ne 'yes') {
			UmsiQemu::skip_kvm(1);
			last SKIP;
		}
		subtest "$accel nvme" => sub {
			my $r = UmsiTest::run_checked(accel => $accel,
				smp => '6,sockets=2,cores=3',
				devices => ['-drive', "if=none,id=d0,file=$img,format=raw",
					    '-device', 'nvme,serial=umsi,drive=d0,addr=3'],
				append => 'umsi.drivers=nvme umsi.fire=50',
				name => "$accel nvme");
			my $d = UmsiTest::device($r, '0000:00:03.0');
			is($d->{mode}, 'msix', 'nvme in MSI-X mode');
			is($d->{msix_max}, 65, 'the table has 65 entries');
			is(scalar @{$d->{vectors} // []}, 5, 'admin + 4 I/O vectors');
			my @f = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
			is(scalar @f, 5, 'five vectors fired');
			is(scalar(grep { $_->{ok} && $_->{received} == $_->{sent} } @f), 5,
			   'every command one handler call, on its CPU');
			my ($n) = grep { ($_->{event} // '') eq 'nvme' } @{$r->{umsi}};
			is($n->{reads}, 200, '200 reads completed');
			is($n->{bad_reads}, 0, 'every read returned its sector');
			my %cpus = map { $_->{cpu} => 1 } @{$d->{vectors} // []};
			is(scalar keys %cpus, 5, 'the five vectors on five CPUs');
		};
	}
}
done_testing();
