#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# TAP: `umsi sim` built with AddressSanitizer, UBSan and LeakSanitizer
# (`make umsi-asan`: build/asan/umsi) on bad machine files and a few good
# ones. Bad input must end in exit status 2 with a message naming the
# file, the line and the problem, and no sanitizer report: no overflow, no
# undefined behaviour, and nothing leaked on the error paths either.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use FindBin;

my $root = "$FindBin::Bin/../..";
my $asan_build = $ENV{ASAN_BUILD} // "$root/build/asan";
my $umsi = "$asan_build/umsi";

my $mk = `make -C '$root' --no-print-directory -s umsi-asan 2>&1`;
if ($?) {
	plan skip_all => "cannot build the sanitized umsi: " . (split /\n/, $mk)[-1]
		if $mk =~ /unrecognized|not supported|cannot find -l/;
	fail('make umsi-asan');
	diag($mk);
	done_testing();
	exit 1;
}

$ENV{ASAN_OPTIONS} = 'detect_leaks=1:exitcode=86:abort_on_error=0';
$ENV{UBSAN_OPTIONS} = 'print_stacktrace=1:halt_on_error=1:exitcode=87';
$ENV{LSAN_OPTIONS} = 'exitcode=88';

my $dir = tempdir(CLEANUP => 1);
my $k = 0;

sub machine {
	my $f = sprintf("%s/m%03d.umsi", $dir, $k++);
	open(my $fh, '>:raw', $f) or die "$f: $!";
	print $fh @_;
	close($fh);
	return $f;
}

sub run_umsi {
	my @args = @_;
	my ($out, $err) = ("$dir/out", "$dir/err");
	my $pid = fork() // die "fork: $!";
	if (!$pid) {
		open(STDOUT, '>', $out) or die;
		open(STDERR, '>', $err) or die;
		alarm(60);
		exec($umsi, @args) or die "exec: $!";
	}
	waitpid($pid, 0);
	my $rc = $? & 127 ? 128 + ($? & 127) : $? >> 8;
	local $/;
	open(my $e, '<', $err) or die; my $se = <$e> // ''; close($e);
	return ($rc, $se);
}

sub clean { $_[0] !~ /Sanitizer|runtime error|==\d+==/ }

# Status 2, the expected message, no sanitizer report.
sub bad {
	my ($what, $re, @args) = @_;
	my ($rc, $err) = run_umsi('sim', @args);
	ok($rc == 2 && $err =~ /^umsi sim: .*$re/ && clean($err), "bad: $what")
		or diag("status $rc: " . substr($err, 0, 1500));
}

sub good {
	my ($what, $want, @args) = @_;
	my ($rc, $err) = run_umsi('sim', @args);
	ok($rc == $want && clean($err), "good: $what (status $want)")
		or diag("status $rc: " . substr($err, 0, 1500));
}

bad('cmdline too long', qr/:2: cmdline too long/,
    machine("cpus 2\ncmdline " . join(' ', ('A' x 100) x 40) . "\ndevice e msi=1\n"));
bad('counts past 2^32', qr/:2: 65536 device instances; at most 8160/,
    machine("cpus 2\n" . ("device d msi=1 count=65536\n" x 65537)));
bad('counts past 8160', qr/:3: 8161 device instances/,
    machine("cpus 2\ndevice a msi=1 count=8000\ndevice b msi=1 count=161\n"));
bad('NUL byte', qr/:3: NUL byte at offset 22/,
    machine("cpus 2\ndevice a msi=1\n\0device b msi=3\n"));
bad('too many words', qr/:2: more than 8195 words/,
    machine("cpus 2\ndevice a msi=1 " . ('addr64 ' x 8200) . "\n"));
bad('cpus twice', qr/:2: 'cpus' given twice \(lines 1 and 2\)/,
    machine("cpus apic 1 2 3\ncpus 2\n"));
bad('error after cpus apic and devices (frees both)', qr/:4: msi= takes/,
    machine("cpus apic 0 2 4\ndevice a msi=1\ndevice b msix=8\ndevice c msi=3\n"));
bad('error after cmdline and platform', qr/:4: unknown keyword/,
    machine("cpus 2\nplatform x2apic\ncmdline pci_nomsi\nfrob\n"));
bad('duplicate APIC ID', qr/:1: APIC ID 5 listed twice/,
    machine("cpus apic 1 5 9 5\n"));
bad('APIC ID past 32 bits', qr/:1: bad APIC ID '4294967296'/,
    machine("cpus apic 4294967296\n"));
bad('broadcast APIC ID', qr/:1: bad APIC ID '0xffffffff'/,
    machine("cpus apic 0xffffffff\n"));
bad('8193 CPUs', qr/:1: 8193 CPUs; the simulator takes at most 8192/, machine("cpus 8193\n"));
bad('long device name', qr/:2: device name '.*' is longer than 31/,
    machine("cpus 2\ndevice " . ('x' x 300) . " msi=1\n"));
bad('control bytes', qr/:1: unknown keyword '\\x01\\x02'/, machine("\x01\x02\n"));
bad('no cpus line', qr/: no 'cpus' line/, machine("device a msi=1\n"));
bad('empty file', qr/: no 'cpus' line/, machine(""));
bad('file past 16 MiB', qr/: more than 16777216 bytes/,
    machine("cpus 2\n" . ('#' x (16 << 20)) . "\n"));
bad('missing file', qr/cannot read .*: No such file/, "$dir/absent.umsi");
bad('a directory', qr/cannot read .*: Is a directory/, $dir);
bad('unknown option', qr/unknown option '--frob'/, '--frob');
bad('two files', qr/one machine file only/, machine("cpus 1\n"), machine("cpus 1\n"));
bad('sockets that do not divide the CPUs', qr/:2: sockets 3: 8 CPUs do not split/,
    machine("cpus 8\nsockets 3\ndevice a msi=1\n"));
bad('an unwritable --svg file', qr/cannot write .*no\/such\/x\.svg/, '--svg', "$dir/no/such/x.svg",
    machine("cpus 2\ndevice a msi=1\n"));

good('the built-in machine', 0);
good('the built-in machine as JSON', 0, '--json');
good('--svg, sockets, every kind of cell', 1, '--svg', "$dir/all.svg",
     machine("cpus apic 0 1 2 3 4 5 6 300\nsockets 2\nplatform isa-pic\n" .
	     join('', map { "device d$_ msix=" . (2 + $_) . ($_ % 3 ? '' : ' spread') . "\n" } 1 .. 14) .
	     "device big msix=2048\ndevice blk msi=32 count=2\ndevice old intx=A\n"));
good('--svg on an ITS machine', 0, '--svg', "$dir/its.svg", "$root/examples/its-server.umsi");
good('examples/gapped-apic.umsi', 0, "$root/examples/gapped-apic.umsi");
good('examples/too-small.umsi', 1, '--quiet', "$root/examples/too-small.umsi");
good('examples/storage-server.umsi', 0, '--json', "$root/examples/storage-server.umsi");
good('shared INTx lines, remap, policy', 1, '--proc',
     machine("cpus apic 0 1 300 4294967294\nplatform x2apic ext-dest-id remap\n" .
	     "cmdline pci_msi=specific device_msi=0x10001af4\n" .
	     "device a msix=4 spread\ndevice b msi=8 maskable\ndevice c intx=B count=6\n"));

done_testing();
