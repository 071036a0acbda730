#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# `umsi inspect --check` on messages in logical destination mode, on
# made-up machines (--sysroot) as Linux would set them up:
#   - xAPIC flat on 2 and on 8 CPUs (no x2apic flag in /proc/cpuinfo,
#     /sys/devices/system/cpu/possible lists at most 8): destination bit n
#     is Linux CPU n, whatever the CPU's APIC ID;
#   - x2APIC cluster (an APIC ID above 255, or the x2apic flag with more
#     than 8 possible CPUs): bit n of cluster 0 is the CPU whose x2APIC ID
#     is n;
# each with one message deliberately sent outside its IRQ's affinity and
# one naming no CPU: the comparison runs and finds exactly those. Where
# the model cannot be known (possible CPUs unreadable; the x2apic flag on
# a small machine whose flat and cluster readings differ), the report
# says so and compares nothing.
use strict;
use warnings;
use JSON::PP;
use Test::More;
use File::Temp qw(tempdir);
use File::Path qw(make_path);
use FindBin;
require "$FindBin::Bin/lib.pl";

our $UMSI;
plan skip_all => "$UMSI is not built" unless -x $UMSI;

my $tmp = tempdir(CLEANUP => 1);

# x86 message address (SDM 11.11.1): destination bits 19:12 (and 11:5 as
# 14:8), bit 2 logical.
sub addr { my ($dest, %o) = @_;
	0xfee00000 | ($dest & 0xff) << 12 | (($dest >> 8) & 0x7f) << 5 |
	($o{physical} ? 0 : 4) }
sub data { my ($vec) = @_; $vec }

# MSI-X at 0x70, $n entries: table at BAR0 + 0, PBA at BAR0 + 0x800.
sub msix_fn {
	my ($n) = @_;
	my $c = cfg_new(0x1af4, 0x1041);
	cfg_w16($c, 4, 0x0006);
	cfg_w32($c, 0x10, 0xfe000000);
	cap_list($c, [0x70, 0x11]);
	cfg_w16($c, 0x72, 0x8000 | ($n - 1));
	cfg_w32($c, 0x74, 0);
	cfg_w32($c, 0x78, 0x800);
	return $c;
}

sub bar0 {
	my ($entries) = @_;
	my $b = join('', map { pack('VVVV', $_->[0], 0, $_->[1], 0) } @$entries);
	$b .= "\0" x (0x800 - length $b);
	return $b . "\0" x 0x800;
}

# MSI at 0x50, one message.
sub msi_fn {
	my ($addr, $data) = @_;
	my $c = cfg_new(0x8086, 0x10d3);
	cfg_w16($c, 4, 0x0006);
	cap_list($c, [0x50, 0x05]);
	cfg_w16($c, 0x52, 0x81);
	cfg_w32($c, 0x54, $addr);
	cfg_w16($c, 0x5c, $data);
	return $c;
}

# A machine: CPUs [cpu, apicid] (flags with x2apic when $o{x2apic}),
# /sys/devices/system/cpu/possible ($o{possible}; none when undef), and
# 00:03.0 with MSI-X entries [dest, vector, affinity], IRQ 40 + index;
# 00:04.0 with one MSI message [dest, vector, affinity], IRQ 60.
sub machine {
	my ($root, %o) = @_;
	make_path("$root/proc", "$root/sys/devices/system/cpu");
	my $flags = 'fpu apic' . ($o{x2apic} ? ' x2apic' : '') . ' tsc';
	write_file("$root/proc/cpuinfo", join('', map {
		"processor\t: $_->[0]\nvendor_id\t: GenuineIntel\napicid\t\t: $_->[1]\n" .
		"initial apicid\t: " . ($_->[1] & 0xff) . "\nflags\t\t: $flags\n\n" } @{$o{cpus}}));
	write_file("$root/sys/devices/system/cpu/possible", "$o{possible}\n")
		if defined $o{possible};
	my @e = @{$o{entries}};
	my %irqs = map { 40 + $_ => 'msix' } 0 .. $#e;
	sysfs_fn($root, '0000:00:03.0', msix_fn(scalar @e),
		 bars => { 0 => [0xfe000000, 0x1000] },
		 res => { 0 => bar0([map { [addr($_->[0], physical => $_->[3]), data($_->[1])] } @e]) },
		 irqs => \%irqs);
	my %aff = map { 40 + $_ => $e[$_][2] } 0 .. $#e;
	my @cpus = map { $_->[0] } @{$o{cpus}};
	my $head = join('', map { sprintf('%11s', "CPU$_") } @cpus) . "\n";
	my $lines = join('', map { sprintf("%3d:%s  PCI-MSIX-0000:00:03.0 %d-edge  q%d\n", 40 + $_,
					   join('', map { sprintf('%11d', 0) } @cpus), $_, $_) } 0 .. $#e);
	if ($o{msi}) {
		sysfs_fn($root, '0000:00:04.0', msi_fn(addr($o{msi}[0]), data($o{msi}[1])),
			 irqs => { 60 => 'msi' });
		$aff{60} = $o{msi}[2];
		$lines .= sprintf("%3d:%s  PCI-MSI-0000:00:04.0 0-edge  m0\n", 60,
				  join('', map { sprintf('%11d', 0) } @cpus));
	}
	write_file("$root/proc/interrupts", $head . $lines);
	for my $irq (keys %aff) {
		make_path("$root/proc/irq/$irq");
		write_file("$root/proc/irq/$irq/effective_affinity_list", "$aff{$irq}\n");
	}
}

sub check_run {
	my ($root) = @_;
	my ($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--check', '--sysroot', $root);
	my ($jrc, $json) = run_cmd($UMSI, 'inspect', '--check', '--json', '--sysroot', $root);
	return ($rc, $out, $err, eval { decode_json($json) });
}

sub findings {
	my ($out) = @_;
	return [sort map { /^(\S+) (MSI(?:-X)?(?: (?:entry|message) \d+)?) \[([a-z-]+)\]: / ?
			   "$1 $2 [$3]" : () } split /\n/, $out];
}

# ---- xAPIC flat, 2 CPUs ------------------------------------------------------
# APIC IDs 0 and 2 (gapped, as some firmware numbers them): in the flat
# model bit 1 is CPU 1 all the same, not APIC ID 1.
my $m = "$tmp/flat2";
machine($m, cpus => [[0, 0], [1, 2]], possible => '0-1',
	entries => [[0x1, 0x41, '0'],           # CPU 0: fine
		    [0x2, 0x42, '1'],           # CPU 1: fine
		    [0x1, 0x43, '1'],           # CPU 0, affinity 1: wrong
		    [0x4, 0x44, '0'],           # bit 2: no CPU 2
		    [0x3, 0x45, '0-1']],        # CPUs 0 and 1, both in: fine
	msi => [0x2, 0x51, '0']);               # CPU 1, affinity 0: wrong
my ($rc, $out, $err, $doc) = check_run($m);
is($rc, 1, 'flat, 2 CPUs: findings, exit 1') or diag($out, $err);
is_deeply(findings($out), ['0000:00:03.0 MSI-X entry 2 [outside-affinity]',
			   '0000:00:03.0 MSI-X entry 3 [outside-affinity]',
			   '0000:00:04.0 MSI message 0 [outside-affinity]'],
	  'flat, 2 CPUs: the wrong destination, the one naming no CPU and the wrong MSI, nothing else')
	or diag($out);
like($out, qr/^0000:00:03\.0 MSI-X entry 2 \[outside-affinity\]: IRQ 42 sends vector 0x43 to logical destination 0x1, CPU 0 \(flat model: bit n is CPU n\), outside its effective affinity 1: /m,
     'flat: the finding names the destination, the CPU, the model and the affinity');
like($out, qr/^0000:00:03\.0 MSI-X entry 3 \[outside-affinity\]: IRQ 43 sends vector 0x44 to logical destination 0x4, which names no CPU of this machine/m,
     'flat: a bit with no CPU behind it is lost');
like($out, qr/^note: 6 messages use logical destination mode; the CPUs they name are known: no CPU has the x2apic flag in \/proc\/cpuinfo \(xAPIC mode\) and \/sys\/devices\/system\/cpu\/possible lists 2 CPUs: Linux's flat model .* so destination bit n is Linux CPU n$/m,
     'flat: how the CPUs are known is said');
unlike($out, qr/not checked: .*logical/, 'flat: no logical message left uncompared');
is(scalar(grep { $_->{check} eq 'outside-affinity' } @{$doc->{findings}}), 3, 'flat: --json agrees');
ok((grep { /flat model/ } @{$doc->{notes}}), 'flat: --json carries the note');
(undef, $out) = run_cmd($UMSI, 'inspect', '--sysroot', $m);
like($out, qr/Message: dest logical 0x2 \(CPU 1\), /, 'flat: the text report names the CPU of a logical MSI');

# ---- xAPIC flat, 8 CPUs ------------------------------------------------------
$m = "$tmp/flat8";
machine($m, cpus => [map { [$_, 2 * $_] } 0 .. 7], possible => '0-7',
	entries => [[0x80, 0x41, '7'],          # CPU 7: fine
		    [0x40, 0x42, '5'],          # CPU 6, affinity 5: wrong
		    [0x01, 0x43, '0'],          # CPU 0: fine
		    [0x10, 0x44, '4']]);        # CPU 4: fine
($rc, $out, $err) = check_run($m);
is($rc, 1, 'flat, 8 CPUs: exit 1') or diag($out, $err);
is_deeply(findings($out), ['0000:00:03.0 MSI-X entry 1 [outside-affinity]'],
	  'flat, 8 CPUs: only the wrong one') or diag($out);
like($out, qr/IRQ 41 sends vector 0x42 to logical destination 0x40, CPU 6 \(flat model/,
     'flat, 8 CPUs: bit 6 is CPU 6 (APIC ID 12)');
like($out, qr/possible lists 8 CPUs: Linux's flat model/, 'flat, 8 CPUs: the model and why');

# The same on 9 possible CPUs: Linux would be in physical flat.
$m = "$tmp/physflat";
machine($m, cpus => [map { [$_, $_] } 0 .. 7], possible => '0-8',
	entries => [[0x40, 0x42, '5']]);
($rc, $out) = check_run($m);
is($rc, 0, 'xAPIC, 9 possible CPUs: nothing compared, nothing found');
like($out, qr/^not checked: 1 message uses logical destination mode and is not compared with affinity: .*lists 9 CPUs: with more than 8 Linux uses physical flat, so a logical destination is not one Linux wrote/m,
     'xAPIC, 9 possible CPUs: says why not');

# ---- x2APIC cluster -----------------------------------------------------------
# APIC IDs above 255 exist only in x2APIC mode. Cluster 0 holds x2APIC
# IDs 0-15: bit n of a message's destination is x2APIC ID n.
$m = "$tmp/cluster";
machine($m, cpus => [[0, 0], [1, 1], [2, 2], [3, 3], [4, 0x100], [5, 0x101]],
	possible => '0-5', x2apic => 1,
	entries => [[0x4, 0x41, '2'],           # x2APIC ID 2 = CPU 2: fine
		    [0x8, 0x42, '1'],           # ID 3 = CPU 3, affinity 1: wrong
		    [0x20, 0x43, '0'],          # ID 5: no CPU in cluster 0
		    [0x1, 0x44, '0']]);         # ID 0 = CPU 0: fine
($rc, $out, $err, $doc) = check_run($m);
is($rc, 1, 'x2APIC cluster: exit 1') or diag($out, $err);
is_deeply(findings($out), ['0000:00:03.0 MSI-X entry 1 [outside-affinity]',
			   '0000:00:03.0 MSI-X entry 2 [outside-affinity]'],
	  'x2APIC cluster: the wrong one and the one naming no CPU') or diag($out);
like($out, qr/IRQ 41 sends vector 0x42 to logical destination 0x8, CPU 3 \(x2APIC cluster model\), outside its effective affinity 1/,
     'x2APIC cluster: bit 3 is x2APIC ID 3');
like($out, qr/^note: .*CPU 4 has APIC ID 0x100, above 255, so the local APICs are in x2APIC mode.*\(a >> 4\) << 16 \| 1 << \(a & 15\)/m,
     'x2APIC cluster: how the mode is known and the logical ID formula');

# x2apic flag and 12 possible CPUs: xAPIC would be physical flat.
$m = "$tmp/cluster12";
machine($m, cpus => [map { [$_, $_ + 16] } 0 .. 11], possible => '0-11', x2apic => 1,
	entries => [[0x1 << 16 | 0x2, 0x41, '1'], [0x1, 0x42, '0']]);
($rc, $out) = check_run($m);
# Cluster 1 is out of a message's 15 bits: 0x10002 reads as 0x2, and
# cluster 0 (x2APIC IDs 0-15) has no CPU here.
is_deeply(findings($out), ['0000:00:03.0 MSI-X entry 0 [outside-affinity]',
			   '0000:00:03.0 MSI-X entry 1 [outside-affinity]'],
	  'x2apic flag, 12 possible CPUs (IDs 16-27): cluster 0 is empty, both messages lost')
	or diag($out);
like($out, qr/x2apic flag in \/proc\/cpuinfo\) and \/sys\/devices\/system\/cpu\/possible lists 12 CPUs: in xAPIC mode Linux would use physical flat/,
     'x2apic flag, 12 possible CPUs: cluster, and why');

# ---- what cannot be known ------------------------------------------------------
# The x2apic flag on 4 CPUs: Linux may be in flat (xAPIC) or cluster
# (x2APIC) mode. With APIC IDs 0,2,4,6 destination 0x2 is CPU 1 in the
# flat model and x2APIC ID 1 (no CPU) in the cluster model.
$m = "$tmp/either";
machine($m, cpus => [[0, 0], [1, 2], [2, 4], [3, 6]], possible => '0-3', x2apic => 1,
	entries => [[0x2, 0x41, '0'], [0x1, 0x42, '1']]);
($rc, $out) = check_run($m);
# 0x1 is CPU 0 in both models (APIC ID 0): compared, and wrong.
is_deeply(findings($out), ['0000:00:03.0 MSI-X entry 1 [outside-affinity]'],
	  'flat or cluster: where the two agree the comparison runs') or diag($out);
like($out, qr/CPU 0 \(the flat and x2APIC cluster models agree\)/, 'and says the models agree');
like($out, qr/^not checked: 1 message uses logical destinations that the xAPIC flat model and the x2APIC cluster model read as different CPUs, and which of the two Linux uses is not known here, so it is not compared with affinity: the CPUs may run x2APIC/m,
     'where they disagree: not compared, and why');
(undef, $out) = run_cmd($UMSI, 'inspect', '--sysroot', $m);
like($out, qr/^note: 2 messages use logical destination mode; the CPUs they name are known only where two models agree: /m,
     'the text report says the CPUs are known only where the models agree');

# APIC IDs 0-3 on the same machine: both models agree everywhere.
$m = "$tmp/either-same";
machine($m, cpus => [map { [$_, $_] } 0 .. 3], possible => '0-3', x2apic => 1,
	entries => [[0x2, 0x41, '0'], [0x8, 0x42, '3']]);
($rc, $out) = check_run($m);
is_deeply(findings($out), ['0000:00:03.0 MSI-X entry 0 [outside-affinity]'],
	  'flat or cluster with APIC ID n = CPU n: compared') or diag($out);
unlike($out, qr/not checked: .*logical/, 'and nothing left out');

# No possible file, xAPIC: flat or physical flat cannot be told.
$m = "$tmp/nopossible";
machine($m, cpus => [[0, 0], [1, 1]], entries => [[0x1, 0x41, '1']]);
($rc, $out) = check_run($m);
is($rc, 0, 'possible CPUs unknown: nothing found');
like($out, qr/^not checked: 1 message uses logical destination mode and is not compared with affinity: .*\/sys\/devices\/system\/cpu\/possible cannot be read: Linux uses the flat logical model with at most 8 possible CPUs and physical flat beyond/m,
     'possible CPUs unknown: not compared, and why');
(undef, $out) = run_cmd($UMSI, 'inspect', '--sysroot', $m);
like($out, qr/^note: 1 message uses logical destination mode; the CPUs they name are not known: /m,
     'the text report says the CPUs are not known');

# No /proc/cpuinfo at all.
$m = "$tmp/nocpuinfo";
machine($m, cpus => [[0, 0]], possible => '0', entries => [[0x1, 0x41, '0']]);
unlink("$m/proc/cpuinfo");
($rc, $out) = check_run($m);
like($out, qr/^not checked: 1 message uses logical destination mode and is not compared with affinity: .*\/proc\/cpuinfo names no APIC IDs/m,
     'no /proc/cpuinfo: said');

# A possible file that is no CPU list is said, not trusted.
$m = "$tmp/badpossible";
machine($m, cpus => [[0, 0], [1, 1]], possible => 'zero-one', entries => [[0x1, 0x41, '1']]);
($rc, $out) = check_run($m);
like($out, qr/^note: .*possible is not a CPU list: the number of possible CPUs is not known/m,
     'a possible file that is no CPU list: said');
is_deeply(findings($out), [], 'and nothing compared from it');

done_testing();
