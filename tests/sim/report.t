#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# TAP: the `umsi sim` report (docs/sim-format.md, "The report"). It fits
# a screen or two whatever the machine; its figures agree with the JSON;
# --proc has every device, IRQ and CPU; and what it says would make a
# device fit does: each suggestion is applied to the file and run again.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use JSON::PP;
use FindBin;

my $root = "$FindBin::Bin/../..";
my $umsi = $ENV{UMSI} // "$root/" . ($ENV{BUILD} // 'build') . '/umsi';
my $dir = tempdir(CLEANUP => 1);
my $k = 0;

# The figures below are a PC's whose kernel takes ISA interrupts through
# the 8259: CPU 0 withholds the 16 legacy vectors (187 left, 203 on the
# others). Without `platform isa-pic` every CPU has 203.
sub machine {
	my $f = sprintf("%s/r%03d.umsi", $dir, $k++);
	open(my $fh, '>', $f) or die "$f: $!";
	print $fh "platform isa-pic\n", @_;
	close($fh);
	return $f;
}

# (exit status, standard output) of `umsi sim ARGS`.
sub sim {
	my $out = `$umsi sim @_ 2>&1`;
	return ($? >> 8, $out);
}

sub json {
	my ($rc, $out) = sim('--json', @_);
	my $j = eval { decode_json($out) };
	return ($rc, $j);
}

# The device entry of @name in the JSON of a run.
sub dev {
	my ($j, $name) = @_;
	my ($d) = grep { $_->{name} eq $name } @{$j->{devices}};
	return $d;
}

# ---- A screen or two, whatever the machine ----------------------------------

# 8192 CPUs, 8160 device lines of one function each: a row each would be
# 8160 rows.
my $many = "cpus 8192\nplatform x2apic ext-dest-id\n" .
	   join('', map { "device d$_ msix=8 vectors=4\n" } 0 .. 8159);
my ($rc, $out) = sim(machine($many));
my $lines = () = $out =~ /\n/g;
ok($rc == 0 && $lines <= 80, "8192 CPUs, 8160 device lines: $lines lines of report")
	or diag(substr($out, 0, 2000));
like($out, qr/^  \.\.\. 8140 more rows \(umsi sim --proc lists them all\)$/m,
     'the device table says how many rows it left out');
like($out, qr/^vectors per CPU: min \d+, median \d+, max \d+ \(up to 203 each\); 32640 in use on 8192 CPUs$/m,
     'the spread counts all 32640 vectors on 8192 CPUs');

# Hundreds of devices that do not fit: the shortfalls are grouped and cut.
my $short = "cpus 2\n" . join('', map { "device s$_ msix=64 vectors=64 count=3\n" } 0 .. 99);
($rc, $out) = sim(machine($short));
$lines = () = $out =~ /\n/g;
ok($rc == 1 && $lines <= 100, "300 devices, most short: $lines lines") or diag(substr($out, 0, 3000));
like($out, qr/^\d+ devices did not get what they asked for:$/m, 'says how many did not fit');
like($out, qr/^  s\d+-?\d* +asked for 64, got 0 \(none\)( each)?: no_vectors$/m,
     'alike instances of a line share a row');

# ---- Figures agree with the JSON --------------------------------------------------

my $mixed = machine("cpus apic 0 1 2 4 5 6 8 9 300\n" .
		    "device nvme msix=65 vectors=9 count=3\n" .
		    "device nic msix=256 vectors=40 count=2\n" .
		    "device xhci msi=16 vectors=16\n");
(my $jrc, my $j) = json($mixed);
($rc, $out) = sim($mixed);
ok($j && $rc == 0 && $jrc == 0, 'a mixed machine fits');
my @use = sort { $a <=> $b } map { $_->{allocated} }
	  grep { $_->{apic_id} != 300 } @{$j->{cpus}};
my ($min, $med, $max) = ($use[0], $use[int((@use - 1) / 2)], $use[-1]);
like($out, qr/^vectors per CPU: min $min, median $med, max $max \(up to \d+ each\); 123 in use on 8 CPUs$/m,
     "min $min, median $med, max $max: the CPUs the JSON lists, APIC ID 300 left out");
is_deeply([$j->{spread}{min}, $j->{spread}{median}, $j->{spread}{max}, $j->{spread}{cpus}],
	  [$min, $med, $max, 8], 'the JSON spread says the same');
my @cpus = @{$j->{cpus}}[0 .. 7];
my @busy = map { $_->{cpu} } (sort { $b->{allocated} <=> $a->{allocated} || $a->{cpu} <=> $b->{cpu} } @cpus)[0 .. 4];
my @idle = map { $_->{cpu} } (sort { $a->{allocated} <=> $b->{allocated} || $a->{cpu} <=> $b->{cpu} } @cpus)[0 .. 4];
my ($tb) = $out =~ /^  busiest  CPUs: (.*)$/m;
my ($te) = $out =~ /^  emptiest CPUs: (.*)$/m;
is(join(',', $tb =~ /(\d+) \(\d+\)/g), join(',', @busy), 'the busiest CPUs, ties to the lowest');
is(join(',', $te =~ /(\d+) \(\d+\)/g), join(',', @idle), 'the emptiest CPUs, ties to the lowest');
like($out, qr/^  not counted, .* CPU 8$/m, 'CPU 8 (APIC ID 300) is named as left out');
like($out, qr/^  nic0-1 +40 each on \d+ CPUs each \(at most \d+ on one\); together on \d+: /m,
     'where a grouped row landed');
like($out, qr/^  xhci +16 on 1 CPU \(at most 16 on one\): \d+ \(an MSI block sits on one CPU\)$/m,
     'an MSI block on one CPU');

# ---- --proc: every device, IRQ and CPU ------------------------------------------------------

($rc, $out) = sim('--proc', machine("cpus 16\ndevice n msix=8 count=30\n"));
ok($rc == 0 && $out =~ /^n29 +1 0000:01:1d\.0 /m && $out =~ /CPU15/ && $out =~ /^ SPU:/m,
   '--proc: a row per device and /proc/interrupts columns');
like($out, qr/^15 +15 +187 +0 +0 +16$/m, '--proc: the vector usage of every CPU');
($rc, $out) = sim('--proc', machine("cpus 8192\nplatform x2apic ext-dest-id\ndevice n msix=1024\n"));
ok($rc == 0 && $out =~ /too wide for a \/proc\/interrupts table: one row per IRQ/ &&
   $out =~ /^\d+ +n +1023 +\d+ +\d+ +0x[0-9a-f]{2} +1$/m,
   '--proc past 4M cells: a row per IRQ, each with its count');
my $irqrows = () = $out =~ /^\d+ +n +\d+ +\d+ +\d+ +0x/mg;
is($irqrows, 1024, '--proc: all 1024 IRQ rows');

# ---- What would make it fit does ----------------------------------------------------------

# Running out: the NIC could have had what was left.
my $base = "device nvme vendor=0x1b36 device=0x0010 msix=65 vectors=65\n" .
	   "device nic vendor=0x15b3 device=0x101d msix=2048 vectors=600 min=8\n";
($rc, $j) = json(machine("cpus 2\n$base"));
my $nic = dev($j, 'nic');
ok($rc == 1 && $nic->{granted} == 325 && $nic->{could_have} == 325,
   'nic: granted 325 of 600, could have had 325') or diag(encode_json($nic // {}));
like($nic->{fix}, qr/^vectors=325, or about 2 more CPUs \(203 vectors each\)$/, "nic: $nic->{fix}");
(my $fewer = $base) =~ s/vectors=600/vectors=325/;
($rc, $j) = json(machine("cpus 2\n$fewer"));
ok($rc == 0 && dev($j, 'nic')->{granted} == 325, 'with vectors=325 it fits');
($rc, $j) = json(machine("cpus 4\n$base"));
ok($rc == 0 && dev($j, 'nic')->{granted} == 600, 'with 2 more CPUs it fits');

# Nothing left: could have had 0, one more CPU.
my $full = "device a vendor=0x15b3 device=0x101d msix=2048 vectors=390\n" .
	   "device b vendor=0x15b3 device=0x101d msix=64 vectors=64\n";
($rc, $j) = json(machine("cpus 2\n$full"));
my $b = dev($j, 'b');
ok($rc == 1 && $b->{granted} == 0 && $b->{could_have} == 0 &&
   $b->{fix} eq 'about 1 more CPU (203 vectors each)', "b: could have had 0; $b->{fix}");
($rc, $j) = json(machine("cpus 3\n$full"));
ok($rc == 0, 'with 1 more CPU it fits');

# More CPUs past what an 8-bit destination names: the report says so.
($rc, $j) = json(machine("cpus 254\ndevice a msix=2048 vectors=2048 count=25\ndevice b msix=2048 vectors=1024\n"));
$b = dev($j, 'b');
ok($rc == 1 && $b->{fix} =~ /about \d+ more CPUs \(203 vectors each\) \(APIC IDs above 254: needs platform ext-dest-id\)/,
   "past APIC ID 254: $b->{fix}");

# Managed spreading reserves a vector on each CPU of the mask: without
# spread the last one fits.
my $spread = "device big msix=2048 vectors=2048\ndevice big2 msix=2048 vectors=1000\n" .
	     "device nvme msix=65 vectors=8 count=12 spread\n";
($rc, $j) = json(machine("cpus 16\n$spread"));
my $n11 = dev($j, 'nvme11');
ok($rc == 1 && $n11->{granted} == 0 &&
   $n11->{fix} eq 'no spread (managed vectors reserve one on every CPU of their mask)',
   "nvme11: $n11->{fix}") or diag(encode_json($n11 // {}));
(my $nospread = $spread) =~ s/ spread\n/\n/;
$nospread .= "device last msix=65 vectors=8 spread\n";
($rc, $j) = json(machine("cpus 16\ndevice big msix=2048 vectors=2048\ndevice big2 msix=2048 vectors=1000\n" .
			 "device nvme msix=65 vectors=8 count=11 spread\ndevice last msix=65 vectors=8\n"));
ok($rc == 0, 'without spread it fits');

# The device itself offers too few: a bigger MSI capability fits.
($rc, $j) = json(machine("cpus 4\ndevice x msi=8 vectors=16\n"));
my $x = dev($j, 'x');
ok($rc == 1 && $x->{granted} == 8 && $x->{fix} eq 'vectors=8, or a device with msi=16 (or MSI-X)',
   "x: $x->{fix}");
($rc, $j) = json(machine("cpus 4\ndevice x msi=16 vectors=16\n"));
ok($rc == 0, 'with msi=16 it fits');

# Policy: the cmdline names the device.
($rc, $j) = json(machine("cpus 4\ndevice p vendor=0x1af4 device=0x1000 msi=8\n" .
			 "device q vendor=0x8086 device=0x10d3 msi=8\ncmdline device_nomsi=0x10001af4\n"));
my $p = dev($j, 'p');
ok($rc == 1 && $p->{reason} =~ /^policy:device_nomsi/ && !exists $p->{could_have} &&
   $p->{fix} eq 'a device_nomsi= without 0x10001af4' && dev($j, 'q')->{granted} == 8,
   "policy: $p->{fix}; the device it does not name is not touched");

# The probe leaves the machine as it would have been without it: the
# device after a short one gets the same vectors either way.
my ($rc1, $j1) = json(machine("cpus 2\n$base" . "device z msix=4 vectors=4\n"));
(my $nob = $base) =~ s/vectors=600 min=8/vectors=325/;
my ($rc2, $j2) = json(machine("cpus 2\n$nob" . "device z msix=4 vectors=4\n"));
is_deeply(dev($j1, 'nic')->{vectors}, dev($j2, 'nic')->{vectors},
	  'the short device ends with the vectors it would have had unprobed');
is_deeply([map { $_->{cpu} } @{$j1->{cpus}}], [map { $_->{cpu} } @{$j2->{cpus}}], 'same CPUs');
is_deeply([map { $_->{allocated} } @{$j1->{cpus}}], [map { $_->{allocated} } @{$j2->{cpus}}],
	  'same vectors in use on every CPU');

# Under remapping each vector takes a remapping entry (65536 of them):
# when those run out, more CPUs would not help and the report says so.
($rc, $j) = json(machine("cpus 400\nplatform x2apic remap\ndevice nic msix=2048 count=33\n"));
my $n32 = dev($j, 'nic32');
ok($rc == 1 && $n32->{granted} == 0 &&
   $n32->{reason} eq 'no_vectors: the interrupt-remapping table is full (65536 entries)' &&
   $n32->{fix} !~ /more CPU/, "remapping table full: $n32->{reason}") or diag(encode_json($n32 // {}));

# IRQ numbers never run out before vectors: an MSI block of 4 for 3
# vectors holds 4 IRQs (numbers for the vectors asked for would be short).
($rc, $j) = json(machine("cpus 64\ndevice m msi=4 vectors=3 count=2000\n"));
ok($rc == 0 && !grep({ $_->{granted} != 3 } @{$j->{devices}}),
   '2000 MSI blocks of 4 for 3 vectors each: every one granted');

done_testing();
