#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# `umsi inspect` built with AddressSanitizer, UBSan and LeakSanitizer
# (`make umsi-asan`: build/asan/umsi) on its error paths and a few good
# inputs: hostile dumps, bad arguments, missing files, a made-up sysfs with
# garbage in every text file. Each ends in its documented exit status
# with no sanitizer report (no overflow, no undefined behaviour, no leak).
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use File::Path qw(make_path);
use FindBin;
require "$FindBin::Bin/lib.pl";

our ($ROOT, $DUMPS);
my $asan = $ENV{ASAN_BUILD} // "$ROOT/build/asan";
my $umsi = "$asan/umsi";

my $mk = `make -C '$ROOT' --no-print-directory -s umsi-asan 2>&1`;
if ($?) {
	fail('make umsi-asan');
	diag($mk);
	done_testing();
	exit 1;
}
$ENV{ASAN_OPTIONS} = 'detect_leaks=1:exitcode=86:abort_on_error=0';
$ENV{UBSAN_OPTIONS} = 'print_stacktrace=1:halt_on_error=1:exitcode=87';
$ENV{LSAN_OPTIONS} = 'exitcode=88';

my $dir = tempdir(CLEANUP => 1);
my $n = 0;

sub file_of {
	my $f = "$dir/f" . $n++;
	write_file($f, $_[0]);
	return $f;
}

sub clean { $_[0] !~ /Sanitizer|runtime error|==\d+==/ }

sub check {
	my ($what, $want, $re, @args) = @_;
	my ($rc, $out, $err) = run_cmd($umsi, 'inspect', @args);
	ok($rc == $want && clean($err) && ("$out$err") =~ $re, "$what: exit $want")
		or diag("status $rc\n" . substr("$out$err", 0, 1500));
}

# A function with MSI at 0x50 and MSI-X at 0x70; optional damage.
sub fn {
	my (%o) = @_;
	my $c = cfg_new(0x8086, 0x10d3);
	cfg_w32($c, 0x10, 0xfebc0000);
	cap_list($c, [0x50, 0x05], [0x70, 0x11]);
	cfg_w16($c, 0x52, 0x0180 | 0x0004 | 0x0001);
	cfg_w32($c, 0x54, 0xfee01000);
	cfg_w16($c, 0x72, 0x8000 | 4);
	cfg_w32($c, 0x78, 0x2000);
	$c->[0x71] = 0x50 if $o{loop};          # MSI-X points back to MSI
	$c->[0x34] = 0x22 if $o{unaligned};
	cfg_w32($c, 0x74, 0x7) if $o{bir7};     # table in reserved BIR 7
	return $c;
}

my $hostile = dump_text('00:03.0', fn()) . dump_text('00:03.0', fn(loop => 1)) .
	dump_text('00:04.0', fn(unaligned => 1)) . dump_text('00:05.0', fn(bir7 => 1)) .
	dump_text('00:06.0', [(0xff) x 256]) . dump_text('00:07.0', fn(), 5) .
	dump_text('00:08.0', fn(), 4) . "00: 01 02\n" . "1000: ff ff\n" .
	"12345: 00 00\n" . "00:20.9 bad address\n00: 00\n\n" .
	"ffff:ff:1f.7 x\n" . join('', map { sprintf("%x: %s\n", $_ * 16, join(' ', ('00') x 16)) } 0 .. 300);
check('hostile dump (loop, repeat, misalignment, BIR 7, all-ones, cut rows, junk)',
      0, qr/given again.*loops|loops.*given again/s, '--dump', file_of($hostile));
check('hostile dump as JSON', 0, qr/"errors":\[/, '--dump', file_of($hostile), '--json', '-v');
check('binary junk', 1, qr/holds no device/, '--dump', file_of(join('', map { chr($_ % 256) } 0 .. 5000)));
check('empty dump', 1, qr/holds no device/, '--dump', file_of(''));
check('NUL bytes in a dump', 0, qr/0000:00:03\.0/, '--dump', file_of(dump_text('00:03.0', fn()) . "\0\0\n00: \0"));
check('missing dump', 1, qr/cannot read .*No such file/, '--dump', "$dir/absent");
check('a directory as dump', 1, qr/cannot read/, '--dump', $dir);
check('absent function', 1, qr/no function 0000:00:09\.0/, '--dump', file_of($hostile), '-s', '00:09.0');
check('malformed selector', 2, qr/malformed selector/, '-s', '00:1g.0');
check('selector past its range', 2, qr/malformed selector/, '-s', '1:00:00:20.0');
check('--dump without a file', 2, qr/--dump needs an argument/, '--dump');
check('unknown argument', 2, qr/unknown argument/, '--frob');

# Live mode on a made-up machine whose text files are garbage.
my $sys = "$dir/root";
my $d = "$sys/sys/bus/pci/devices/0000:00:03.0";
make_path("$d/msi_irqs", "$sys/proc/irq/33", "$sys/sys/bus/pci/devices/not-a-bdf",
	  "$sys/sys/kernel/debug/irq/irqs", "$sys/sys/kernel/security");
write_file("$d/config", pack('C*', @{fn()}));
write_file("$d/resource", "0xzz 0x1 junk\n" x 9 . "0xffffffffffffffff 0x0 0x0\n");
write_file("$d/resource0", "short");
write_file("$d/msi_irqs/33", "msix\n");
write_file("$d/msi_irqs/99999999999999999999", "msi\n");
write_file("$d/msi_irqs/34", "");
write_file("$sys/proc/interrupts", "CPU0 CPU1 CPUx CPU99999999999\n" .
	   " 33: 1 2 3 4 5 IR-PCI-MSIX-0000:00:03.0 99999999999999999999999-edge eth0\n" .
	   "99999999999: 1\n-5: 1\n 34:\n 35: 18446744073709551616 PCI-MSI 4294967295999-edge\n" .
	   ("x" x 10000) . "\n");
write_file("$sys/proc/irq/33/effective_affinity_list", "0-1023" x 100);
write_file("$sys/sys/kernel/debug/irq/irqs/33", "Vector: 99999999999999\nTarget: -7\n");
write_file("$sys/sys/kernel/security/lockdown", "[" . ("y" x 300));
check('live mode on a garbage sysfs', 0, qr/0000:00:03\.0/, '--sysroot', $sys);
check('live mode on a garbage sysfs, JSON', 0, qr/"devices"/, '--sysroot', $sys, '--json', '-v');
check('live mode without sysfs', 1, qr/cannot list/, '--sysroot', "$dir/nothing");

# --check on the same inputs: judged, exit 0/1/2, no sanitizer report.
write_file("$sys/proc/cpuinfo", "processor : 0\napicid : 1\nprocessor : x\napicid : 99999999999\n" .
	   "processor: 4294967295\napicid: 4294967295\n" . ("apicid : 3\n" x 50));
check('--check on the garbage sysfs', 1, qr/\[function-masked\]|check: \d+ finding/, '--check', '--sysroot', $sys);
check('--check --json on the garbage sysfs', 1, qr/"findings":\[/, '--check', '--json', '--sysroot', $sys);
check('--check on the hostile dump', 1, qr/\[bus-master-off\]/, '--check', '--dump', file_of($hostile));
check('--check on binary junk', 2, qr/nothing could be checked/, '--check', '--dump',
      file_of(join('', map { chr($_ % 256) } 0 .. 5000)));
check('--check without sysfs', 2, qr/cannot list/, '--check', '--sysroot', "$dir/nothing");
check('--check on a missing dump', 2, qr/cannot read/, '--check', '--dump', "$dir/absent");

# --svg and the logical model on the garbage sysfs, with garbage in the
# files they add: possible, packages, debugfs's vector matrix, hostname.
make_path("$sys/sys/devices/system/cpu/cpu0/topology", "$sys/sys/kernel/debug/irq/domains",
	  "$sys/proc/sys/kernel");
write_file("$sys/sys/devices/system/cpu/possible", "0-4294967295,7-3\n");
write_file("$sys/sys/devices/system/cpu/cpu0/topology/physical_package_id", "-99999999999\n");
write_file("$sys/proc/sys/kernel/hostname", "\x1b[2J" . ("h" x 500));
write_file("$sys/sys/kernel/debug/irq/domains/VECTOR",
	   "System: 300: 0-999,x\n | CPU | avl | vectors\n 0 1 0-255\n 4294967295 1 5-3\n" .
	   " | CPU | avl | man | mac | act | vectors\n 1 1 1 1 1 33,48-\n 2 1 1 1 1 \n" .
	   "System: 2: 0-31,255\n" . (" 3 1 1 1 1 1,2,3\n" x 200));
write_file("$d/msi_irqs/33", "msix\n");
symlink(("../" x 40) . "x" x 200, "$d/driver");
check('--svg on the garbage sysfs', 0, qr/0000:00:03\.0/, '--sysroot', $sys, '--svg', "$dir/g.svg");
check('--check --svg on the garbage sysfs', 1, qr/check: /, '--check', '--sysroot', $sys,
      '--svg', "$dir/g2.svg");
check('--svg on the hostile dump', 2, qr/nothing to draw/, '--dump', file_of($hostile), '--svg', "$dir/h.svg");
check('--svg into no directory', 2, qr/cannot write/, '--sysroot', $sys, '--svg', "$dir/no/x.svg");

# Good input: real dumps.
my @dumps = -d $DUMPS ? (grep { -f } map { "$DUMPS/$_" } qw(cap-MSI-mapping broken-ecaps)) : ();
for my $f (@dumps) {
	check("real dump $f", 0, qr/\[/, '--dump', $f, '-v');
}

done_testing();
