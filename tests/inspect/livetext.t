#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# Live mode (--sysroot) on sysfs and procfs files holding out-of-range
# numbers and garbage: each number is range-checked before use (issue 11),
# so nothing out of range is shown as if it were real. The parsers are
# tools/inspect/livetext.c; tests/fuzz/fuzz_livetext.c fuzzes them.
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

my $root = tempdir(CLEANUP => 1);
my $d = "$root/sys/bus/pci/devices/0000:00:03.0";
make_path("$d/msi_irqs", "$root/proc/irq/33", "$root/proc/irq/34",
	  "$root/sys/bus/pci/devices/0x00:00:03.0", "$root/sys/kernel/debug/irq/irqs");
my $c = cfg_new(0x1af4, 0x1041);
cap_list($c, [0x98, 0x11]);
cfg_w16($c, 0x9a, 0x8000 | 3);
write_file("$d/config", pack('C*', @$c));
write_file("$d/resource", "0x0 0xffffffffffffffff 0x40200\n");
write_file("$d/msi_irqs/33", "msix\n");
write_file("$d/msi_irqs/34", "msix\n");
write_file("$d/msi_irqs/4294967329", "msix\n");    # 2^32 + 33
write_file("$root/proc/interrupts", "CPU0 CPU1 CPUx\n" .
	   " 33: 5 PCI-MSIX-0000:00:03.0 1-edge q1\n" .
	   " 34: 1 2 PCI-MSIX-0000:00:03.0 4096-edge q2\n" .
	   " 4294967329: 7 7 PCI-MSIX-0000:00:03.0 2-edge wrapped\n");
write_file("$root/proc/irq/33/effective_affinity_list", "1\n");
write_file("$root/proc/irq/34/effective_affinity_list", "\e[31m0\n");
write_file("$root/sys/kernel/debug/irq/irqs/33", "Vector: 300\nTarget: 1\n");

my ($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--sysroot', $root, '--json');
my $doc = eval { decode_json($out) };
ok($doc, 'JSON') or diag("$rc $err $out");
is_deeply($doc->{cpus}, [0, 1], 'CPU columns: CPU0 and CPU1, not "CPUx"');
my ($dev) = grep { $_->{bdf} eq '0000:00:03.0' } @{$doc->{devices}};
my @irqs = sort { $a->{irq} <=> $b->{irq} } @{$dev->{msix}{irqs} // []};
is_deeply([map { $_->{irq} } @irqs], [33, 34],
	  'msi_irqs/4294967329 is no IRQ (it used to wrap to 33 or a negative number)');
is_deeply($irqs[0]{counts}, [5, 0], 'a short /proc/interrupts line: the missing count reads 0');
is($irqs[0]{index}, 1, 'IRQ 33 is entry 1');
ok(!defined $irqs[1]{index}, 'hwirq 4096 is no MSI-X entry (at most 2048)');
is($irqs[0]{effective_affinity}, '1', 'a CPU list is shown');
ok(!defined $irqs[1]{effective_affinity}, 'an affinity list with control bytes is not');
ok(!defined $irqs[0]{cpu_vector} && $irqs[0]{target_cpu} == 1,
   'a debugfs vector of 300 is no vector; the target is kept');
ok(!grep({ $_->{bdf} =~ /^0x/ } @{$doc->{devices}}) &&
   grep({ $_->{message} =~ m{/0x00:00:03\.0 is not a PCI address} } @{$doc->{errors}}),
   'a sysfs name with 0x is skipped and reported')
	or diag(encode_json($doc->{errors}));
done_testing();
