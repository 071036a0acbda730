#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# nvme (MSI-X only, 65 entries): the kernel's driver asks for the admin
# vector and one per I/O queue pair (64), the kernel's probe policy grants
# one per CPU plus the admin vector (7 on 6 CPUs, "short":"cpus"), the
# driver creates the I/O
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
			is($d->{want}, 65, 'the driver asked for admin + 64 I/O vectors');
			is(scalar @{$d->{vectors} // []}, 7, 'admin + one I/O vector per CPU');
			is($d->{short}, 'cpus', 'the shortfall is the per-CPU cap');
			my @f = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
			is(scalar @f, 7, 'seven vectors fired');
			is(scalar(grep { $_->{ok} && $_->{received} == $_->{sent} } @f), 7,
			   'every command one handler call, on its CPU');
			my ($n) = grep { ($_->{event} // '') eq 'nvme' } @{$r->{umsi}};
			is($n->{reads}, 300, '300 reads completed (6 queues x 50)');
			is($n->{bad_reads}, 0, 'every read returned its sector');
			my %cpus = map { $_->{cpu} => 1 } @{$d->{vectors} // []};
			cmp_ok(scalar keys %cpus, '>=', 5,
			       'the seven vectors spread over at least five CPUs');
		};
	}
}
done_testing();
