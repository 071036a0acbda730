#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# `umsi inspect --svg FILE`: the heat map of vectors per CPU from a
# made-up machine (--sysroot) and from dumps. The picture is parsed as
# XML and rendered by rsvg-convert (Debian package librsvg2-bin); the
# pixels are read back by tests/sim/svg-cells.py. Each function's vectors
# sit on the CPU its messages name (physical through /proc/cpuinfo,
# logical through the flat model), rows are grouped by package (sysfs
# topology), debugfs's vector matrix tells free, system and other IRQs'
# vectors apart, and without it the picture says those are not known.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use File::Path qw(make_path);
use FindBin;
require "$FindBin::Bin/lib.pl";

our ($UMSI, $ROOT, $DUMPS);
plan skip_all => "$UMSI is not built" unless -x $UMSI;

my $tmp = tempdir(CLEANUP => 1);
my $cells = "$ROOT/tests/sim/svg-cells.py";
my $why_not = system('sh', '-c', 'command -v rsvg-convert >/dev/null') != 0 ?
	'rsvg-convert is not installed (Debian package librsvg2-bin)' :
	system('sh', '-c', 'command -v python3 >/dev/null') != 0 ? 'python3 is not installed' : '';
my %colour = (dev0 => '#4e79a7', dev1 => '#f28e2b', free => '#ebebeb', reserved => '#737373',
	      other => '#111111', unknown => '#fbf0c4');

sub slurp { my ($p) = @_; open(my $f, '<', $p) or return ''; local $/; my $t = <$f>; close($f); $t }

sub render {
	my ($svg, @want) = @_;
	system('rsvg-convert', '-o', "$svg.png", $svg) == 0 or return { error => 'rsvg-convert failed' };
	my $out = `python3 '$cells' '$svg' '$svg.png' @want 2>&1`;
	return { error => $out } if $?;
	my %r;
	for (split /\n/, $out) {
		$r{svg} = [$1, $2] if /^svg (\d+) (\d+)$/;
		$r{png} = [$1, $2] if /^png (\d+) (\d+)$/;
		$r{cell}{"$1:$2"} = $3 if /^cell (\d+) (\d+) (\S+)$/;
	}
	return \%r;
}

sub addr { my ($dest, %o) = @_; 0xfee00000 | ($dest & 0xff) << 12 | ($o{logical} ? 4 : 0) }

sub msix_fn {
	my ($n) = @_;
	my $c = cfg_new(0x1af4, 0x1041);
	cfg_w16($c, 4, 0x0006);
	cfg_w32($c, 0x10, 0xfe000000);
	cap_list($c, [0x70, 0x11]);
	cfg_w16($c, 0x72, 0x8000 | ($n - 1));
	cfg_w32($c, 0x78, 0x800);
	return $c;
}

# MSI, 4 of 4 messages enabled, to APIC ID 3, vectors 0x30-0x33.
sub msi_fn {
	my $c = cfg_new(0x8086, 0x10d3);
	cfg_w16($c, 4, 0x0006);
	cap_list($c, [0x50, 0x05]);
	cfg_w16($c, 0x52, 0x01 | 2 << 1 | 2 << 4 | 0x80);
	cfg_w32($c, 0x54, addr(3));
	cfg_w16($c, 0x5c, 0x30);
	return $c;
}

# Four CPUs, APIC IDs 0-3, packages 0 (CPUs 0, 1) and 1 (CPUs 2, 3);
# 00:03.0 MSI-X: APIC 0 and 1 vector 0x21, logical 0x4 (CPU 2) vector
# 0x22, one masked; 00:04.0 MSI to CPU 3, vectors 0x30-0x33. debugfs's
# matrix adds an IRQ on CPU 0 vector 0x30 and on CPU 3 vector 0x40.
sub machine {
	my ($root, %o) = @_;
	make_path("$root/proc", "$root/sys/devices/system/cpu", "$root/sys/bus/pci/drivers/virtio-pci");
	write_file("$root/proc/cpuinfo", join('', map {
		"processor\t: $_\napicid\t\t: $_\nflags\t\t: fpu apic\n\n" } 0 .. 3));
	write_file("$root/sys/devices/system/cpu/possible", "0-3\n") unless $o{no_possible};
	for my $cpu (0 .. 3) {
		make_path("$root/sys/devices/system/cpu/cpu$cpu/topology");
		write_file("$root/sys/devices/system/cpu/cpu$cpu/topology/physical_package_id",
			   ($cpu < 2 ? 0 : 1) . "\n");
	}
	my @e = ([addr(0), 0x21, 0], [addr(1), 0x21, 0], [addr(0x4, logical => 1), 0x22, 0], [0, 0, 1]);
	my $bar = join('', map { pack('VVVV', $_->[0], 0, $_->[1], $_->[2]) } @e);
	$bar .= "\0" x (0x1000 - length $bar);
	sysfs_fn($root, '0000:00:03.0', msix_fn(4), bars => { 0 => [0xfe000000, 0x1000] },
		 res => { 0 => $bar }, irqs => { 40 => 'msix', 41 => 'msix', 42 => 'msix' });
	symlink('../../../bus/pci/drivers/virtio-pci', "$root/sys/bus/pci/devices/0000:00:03.0/driver");
	sysfs_fn($root, '0000:00:04.0', msi_fn(), irqs => { map { $_ => 'msi' } 60 .. 63 });
	my $z = '          0' x 4;
	write_file("$root/proc/interrupts", join('',
		"           CPU0       CPU1       CPU2       CPU3\n",
		(map { sprintf("%3d:%s  PCI-MSIX-0000:00:03.0 %d-edge  q%d\n", 40 + $_, $z, $_, $_) } 0 .. 2),
		(map { sprintf("%3d:%s  PCI-MSI-0000:00:04.0 %d-edge  m%d\n", 60 + $_, $z, $_, $_) } 0 .. 3)));
	my %aff = (40 => 0, 41 => 1, 42 => 2, 60 => 3, 61 => 3, 62 => 3, 63 => 3);
	for my $irq (keys %aff) {
		make_path("$root/proc/irq/$irq");
		write_file("$root/proc/irq/$irq/effective_affinity_list", "$aff{$irq}\n");
	}
	make_path("$root/proc/sys/kernel");
	write_file("$root/proc/sys/kernel/hostname", "testbox\n");
	return if $o{no_debugfs};
	make_path("$root/sys/kernel/debug/irq/domains");
	write_file("$root/sys/kernel/debug/irq/domains/VECTOR", <<'EOF');
name:   VECTOR
 size:   0
 mapped: 55
 flags:  0x00000103
Online bitmaps:        4
Global available:    794
Global reserved:       6
Total allocated:      10
System: 53: 0-31,128,236-255
 | CPU | avl | man | mac | act | vectors
     0   201     0     0    2  33,48
     1   202     0     0    1  33
     2   202     0     0    1  34
     3   198     0     0    5  48-51,64
EOF
}

# ---- with debugfs's vector matrix ---------------------------------------------
my $m = "$tmp/m";
machine($m);
my ($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--sysroot', $m, '--svg', "$tmp/m.svg");
is($rc, 0, 'live --svg: exit 0') or diag($err);
like($out, qr/^0000:00:03\.0 /m, 'the text report is printed as ever');
my $svg = slurp("$tmp/m.svg");
like($svg, qr/<title>umsi inspect: vectors per CPU of testbox<\/title>/, 'the title names the machine');
like($svg, qr/4 CPUs in 2 packages; 9 vectors in use \(PCI functions and other IRQs\), 803 free/,
     'subtitle: CPUs, packages, vectors in use and free');
like($svg, qr/>package 0<.*>package 1</s, 'rows grouped by package');
like($svg, qr/>0000:00:04\.0 \[8086:10d3\]: 4 /, 'legend: a function without a driver, by its IDs');
like($svg, qr/>0000:00:03\.0 virtio-pci: 3 /, 'legend: a function by its driver');
like($svg, qr/>in use by an IRQ of no PCI device: 2 /, 'legend: the IRQs of no function');
like($svg, qr/>reserved \(exceptions, Linux&apos;s system vectors\): 212 /, 'legend: system vectors');
unlike($svg, qr/not known/, 'nothing is left unknown');
SKIP: {
	skip $why_not, 9 if $why_not;
	my $r = render("$tmp/m.svg", '0:33', '1:33', '2:34', '3:49', '0:48', '3:64', '0:80', '0:128', '2:33');
	ok(!$r->{error}, 'well-formed XML, rendered') or diag($r->{error});
	is_deeply($r->{png}, $r->{svg}, 'the PNG has the SVG\'s size');
	is($r->{cell}{'0:33'}, $colour{dev1}, 'CPU 0, 0x21: 00:03.0 (physical APIC ID 0)');
	is($r->{cell}{'1:33'}, $colour{dev1}, 'CPU 1, 0x21: 00:03.0 (physical APIC ID 1)');
	is($r->{cell}{'2:34'}, $colour{dev1}, 'CPU 2, 0x22: 00:03.0 (logical 0x4, flat: CPU 2)');
	is($r->{cell}{'3:49'}, $colour{dev0}, 'CPU 3, 0x31: 00:04.0\'s MSI block');
	is_deeply([@{$r->{cell}}{'0:48', '3:64'}], [$colour{other}, $colour{other}],
		  'vectors debugfs has in use that no message names: another IRQ\'s');
	is_deeply([@{$r->{cell}}{'0:80', '2:33'}], [$colour{free}, $colour{free}], 'the rest: free');
	is($r->{cell}{'0:128'}, $colour{reserved}, '0x80: a system vector');
}

# ---- without debugfs ---------------------------------------------------------------
$m = "$tmp/nodebugfs";
machine($m, no_debugfs => 1);
($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--sysroot', $m, '--svg', "$tmp/nodebugfs.svg");
is($rc, 0, 'without debugfs: exit 0') or diag($err);
$svg = slurp("$tmp/nodebugfs.svg");
like($svg, qr/7 vectors in use by PCI functions; which others are free is not known/,
     'subtitle: free vectors not known');
like($svg =~ s/<\/text>\n<text [^>]*>/ /gr,
     qr/Vectors that no PCI MSI or MSI-X message names are not known: free, system vectors, or other IRQs&apos; \(IO-APIC, timers, IPIs\)\. \/sys\/kernel\/debug\/irq\/domains\/VECTOR shows them/,
     'a note says what is not known and where it would be');
like($svg, qr/>exceptions \(0x00-0x1f\): 128 /, 'only the exceptions are known reserved');
unlike($svg, qr/>free: /, 'no "free" where free is not known');
SKIP: {
	skip $why_not, 3 if $why_not;
	my $r = render("$tmp/nodebugfs.svg", '0:33', '0:80', '0:5');
	ok(!$r->{error}, 'renders') or diag($r->{error});
	is($r->{cell}{'0:80'}, $colour{unknown}, 'a vector no message names: not known');
	is_deeply([@{$r->{cell}}{'0:33', '0:5'}], [$colour{dev1}, $colour{reserved}],
		  'the function\'s vectors and the exceptions still show');
}

# ---- a logical destination whose CPU cannot be known --------------------------------
$m = "$tmp/nopossible";
machine($m, no_possible => 1);
run_cmd($UMSI, 'inspect', '--sysroot', $m, '--svg', "$tmp/nopossible.svg");
$svg = slurp("$tmp/nopossible.svg") =~ s/<\/text>\n<text [^>]*>/ /gr;
like($svg, qr/1 vectors in logical destination mode are not in the picture: .*possible cannot be read/,
     'a logical destination without a model: left out, and why');
like($svg, qr/>0000:00:03\.0 virtio-pci: 2 /, 'the function keeps its physical ones');

# ---- dumps ----------------------------------------------------------------------------
($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--dump', "$DUMPS/tree-asus-p6t6", '--svg', "$tmp/dump.svg");
is($rc, 0, 'dump --svg: exit 0') or diag($err);
$svg = slurp("$tmp/dump.svg");
like($svg, qr/<title>umsi inspect \S*tree-asus-p6t6: vectors per APIC ID<\/title>/, 'a dump: rows are APIC IDs');
like($svg, qr/>APIC ID 1<.*>APIC ID 5<.*>APIC ID 7</s, 'one row for each APIC ID a message names');
SKIP: {
	skip $why_not, 1 if $why_not;
	ok(!render("$tmp/dump.svg")->{error}, 'the dump\'s picture renders');
}
($rc, undef, $err) = run_cmd($UMSI, 'inspect', '--dump', "$DUMPS/cap-aer-log", '--svg', "$tmp/none.svg");
is($rc, 2, 'a dump without an enabled MSI message: exit 2');
like($err, qr/umsi inspect: \S*none\.svg: nothing to draw: no enabled MSI message names an APIC ID/,
     'and says there is nothing to draw');
($rc, undef, $err) = run_cmd($UMSI, 'inspect', '--sysroot', "$tmp/m", '--svg', "$tmp/no/dir/x.svg");
is($rc, 2, 'an unwritable --svg file: exit 2');
like($err, qr/cannot write \S*no\/dir\/x\.svg: No such file or directory/, 'and says why');
($rc, undef, $err) = run_cmd($UMSI, 'inspect', '--svg');
is($rc, 2, '--svg without a file: exit 2');
like($err, qr/--svg needs an argument/, 'and says so');
($rc, $out) = run_cmd($UMSI, 'inspect', '--check', '--sysroot', "$tmp/m", '--svg', "$tmp/check.svg");
is($rc, 0, '--check --svg: the check\'s status');
ok(-s "$tmp/check.svg", 'and the picture');

done_testing();
