#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# MSI-X set-up from reset costs at most 4N+2 table accesses, counted on
# QEMU's own trace (-trace msix_write_config, memory_region_ops_*: the
# accesses to the 'msix-table' region from the write that sets MSI-X
# Enable + Function Mask on). The machine: an nvme (65-entry table) whose
# driver gets 3 vectors on 2 CPUs.
#  1. cold boot: the firmware left MSI-X untouched, the kernel judges the
#     function fresh (kernel/common/pcireset.c: one read of each entry's Vector
#     Control, 65 reads before set-up, not 4 a entry) and uMSI skips
#     masking the 62 unused entries: 3N writes + 1 read + N unmasks = 13
#     <= 4N+2 = 14;
#  2. umsi.fresh=off: nothing trusted, every entry masked first:
#     T + 3N + N writes + 1 read = 78, the cost before this change;
#  3. umsi.dirty=00:03.0: an earlier owner left entry 64 unmasked; the
#     judgement says not fresh (stale entry_unmasked:64), the set-up masks
#     the whole table again (78), and the monitor sees entry 64 masked;
#  4. the same with umsi.flr=dirty: the kernel resets the function (FLR,
#     100 ms), restores its BARs, knows it fresh, and set-up is 13 again.
# In every case the device works (interrupts fire, reads are right) and
# the monitor check passes.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempfile tempdir);
use Test::More;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();

my ($fh, $img) = tempfile('umsi-fresh-XXXXXX', TMPDIR => 1, UNLINK => 1, SUFFIX => '.img');
binmode($fh);
print $fh pack('a4 V x504', 'UMSI', $_) for 0 .. 255;
close($fh);
my $dir = tempdir('umsi-trace-XXXXXX', TMPDIR => 1, CLEANUP => 1);

my @cases = (
	['cold boot, judged fresh', '', 'boot', 13],
	['umsi.fresh=off', 'umsi.fresh=off', 'no', 78],
	['entry 64 left live', 'umsi.dirty=00:03.0', 'no', 78],
	['entry 64 left live, FLR', 'umsi.dirty=00:03.0 umsi.flr=dirty', 'flr', 13],
);
my $kvm = UmsiQemu::kvm_status();

for my $accel ('tcg', 'kvm') {
    SKIP: {
		if ($accel eq 'kvm' && $kvm ne 'yes') {
			UmsiQemu::skip_kvm(scalar @cases);
			last SKIP;
		}
		for my $c (@cases) {
			my ($name, $param, $fresh, $total) = @$c;
			subtest "$accel $name" => sub {
				my $trace = "$dir/$accel-" . ($param =~ s/\W+/_/gr) . '.log';
				unlink($trace);
				my $r = UmsiTest::run_checked(accel => $accel, smp => 2,
					devices => ['-drive', "if=none,id=d0,file=$img,format=raw",
						    '-device', 'nvme,serial=umsi,drive=d0,addr=3',
						    UmsiQemu::msix_trace_args($trace)],
					append => "umsi.drivers=nvme umsi.fire=5 $param",
					name => "$accel $name");
				my $d = UmsiTest::device($r, '0000:00:03.0');
				my $n = scalar @{$d->{vectors} // []};
				is($n, 3, 'nvme: admin + one I/O vector per CPU');
				is($d->{fresh}, $fresh, "judged fresh: $fresh" .
				   ($d->{stale} ? " ($d->{stale})" : ''));
				is($d->{stale}, 'entry_unmasked:64', 'the live entry named')
					if $param =~ /dirty/ && $fresh eq 'no';
				ok(grep({ /^pci 0000:00:03.0 function level reset$/ } @{$r->{lines}}),
				   'the kernel reset the function') if $fresh eq 'flr';
				my $t = UmsiQemu::msix_trace_count($trace, 'nvme');
				is($t->{enables}, 1, 'MSI-X enabled once');
				my $all = $t->{writes} + $t->{reads};
				diag("$accel $name: MSI-X set-up $t->{writes} writes + " .
				     "$t->{reads} read(s) = $all table accesses (4N+2 = " .
				     (4 * $n + 2) . "); before set-up $t->{before}");
				is($all, $total, "set-up: $all table accesses");
				is($t->{before}, 65, 'the judgement: one read of each entry\'s Vector Control')
					if $fresh eq 'boot';
				cmp_ok($all, '<=', 4 * $n + 2, 'at most 4N+2') if $fresh ne 'no';
				is($t->{reads}, 1, 'one read (the flush)');
				my @f = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
				is(scalar(grep { $_->{ok} } @f), 3, 'each vector fired, one handler call per event');
				my ($nv) = grep { ($_->{event} // '') eq 'nvme' } @{$r->{umsi}};
				is($nv->{bad_reads}, 0, 'every read returned its sector');
			};
		}
	}
}
done_testing();
