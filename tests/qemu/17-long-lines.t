#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# Device lines of any length: an nvme with a 2048-entry MSI-X table
# (msix_qsize=2048) and a virtio-net with 300 vectors, both served by
# umsi.probe=all on 12 CPUs (enough vectors for all 2348). Their lines do
# not fit one UMSI line, so each continues in "device_more" lines, every
# line at most 4 KiB, the last one closing the device. The harness joins
# them and the monitor check compares every one of the 2048 + 300 table
# entries with the joined lines. Then, without QEMU: a chain cut short
# and a count that disagrees with "nvec" are caught by the checker.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use UmsiQemu;
use UmsiCheck;
use UmsiTest;

UmsiTest::require_library();

my @devices = ('-device', 'nvme,serial=umsi,drive=d0,addr=3,msix_qsize=2048',
	       '-drive', 'if=none,id=d0,file=/dev/null,format=raw,readonly=on',
	       '-device', 'virtio-net-pci,vectors=300,addr=4');
my $kvm = UmsiQemu::kvm_status();
my $last;

for my $accel ('tcg', 'kvm') {
    SKIP: {
		if ($accel eq 'kvm' && $kvm ne 'yes') {
			UmsiQemu::skip_kvm(1);
			last SKIP;
		}
		subtest "$accel nvme msix_qsize=2048, virtio-net vectors=300" => sub {
			my $r = UmsiTest::run_checked(accel => $accel, smp => 12,
				devices => \@devices, append => 'umsi.probe=all',
				timeout => 120, name => "$accel long lines");
			$last = $r;
			my %want = ('0000:00:03.0' => 2048, '0000:00:04.0' => 300);
			for my $bdf (sort keys %want) {
				my $d = UmsiTest::device($r, $bdf);
				is($d->{mode}, 'msix', "$bdf in MSI-X mode");
				is($d->{nvec}, $want{$bdf}, "$bdf: nvec $want{$bdf}");
				is(scalar @{$d->{vectors} // []}, $want{$bdf},
				   "$bdf: $want{$bdf} vectors after joining its lines");
				is_deeply([sort { $a <=> $b } map { $_->{index} } @{$d->{vectors} // []}],
					  [0 .. $want{$bdf} - 1], "$bdf: every table index once");
				my @parts = grep { /^UMSI \{"event":"device(?:_more)?","bdf":"\Q$bdf\E"/ }
					@{$r->{lines}};
				cmp_ok(scalar @parts, '>', 1, "$bdf: split over " .
				       scalar(@parts) . ' lines');
				is(scalar(grep { /"more":true\}$/ } @parts), @parts - 1,
				   "$bdf: every line but the last says more");
			}
			my @long = grep { length($_) + 1 > 4096 } grep { /^UMSI / } @{$r->{lines}};
			is(scalar @long, 0, 'no UMSI line longer than 4 KiB');
			ok(!grep({ /"event":"error"/ } @{$r->{lines}}), 'no error line');
		};
	}
}

# The checker catches a device whose continuation lines stop short, and a
# vector count that is not the one announced.
subtest 'checker: broken chains are reported' => sub {
	my $r = $last // {};
	my @objs = grep { ($_->{event} // '') =~ /^device/ } @{$r->{umsi} // []};
	plan skip_all => 'no QEMU run to take lines from' unless @objs;
	my ($lastpart) = grep { ($_->{event} eq 'device_more') && !$_->{more} &&
				$_->{bdf} eq '0000:00:03.0' } @objs;
	my @cut = grep { $_ != $lastpart } @objs;
	my ($d) = grep { $_->{bdf} eq '0000:00:03.0' } @{UmsiQemu::devices(@cut)};
	ok($d->{incomplete}, 'a chain without its closing line is incomplete');
	my $f = { vendor => 0x1b36, device => 0x0010, command => 0x406, msix => { enable => 1, fmask => 0, entries => [] } };
	my @bad = UmsiCheck::check_device($d, $f, {}, {});
	ok(grep({ /cut short/ } @bad), 'the checker says the line was cut short');
	ok(grep({ /line says nvec 2048/ } @bad), 'and that the count disagrees with nvec');
};
done_testing();
