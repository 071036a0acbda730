#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# TAP: `umsi sim` end to end: the built-in machine, the example files, the
# JSON shape, exit statuses and messages for bad input.
use strict;
use warnings;
use JSON::PP;
use File::Temp qw(tempfile);
use FindBin;

my $root = "$FindBin::Bin/../..";
my $umsi = "$root/build/umsi";
my $n = 0;
sub ok { my ($c, $m) = @_; $n++; print(($c ? "ok" : "not ok") . " $n - $m\n"); $c }

sub run {
	my $out = `$umsi @_ 2>&1`;
	return ($? >> 8, $out);
}

my ($rc, $out) = run("sim");
ok($rc == 0, "built-in machine: every device got what it asked for") or print "# $out";
ok($out =~ /every device got what it asked for/, "says so");
ok($out =~ /CPU0/ && $out =~ /SPU/, "prints an interrupt table");
ok($out =~ /APIC-ID/, "prints vector usage per CPU");

($rc, $out) = run("sim --json");
my $j = eval { decode_json($out) };
ok($j, "--json is JSON") or print "# $out";
ok(@{$j->{cpus}} == 8 && $j->{cpus}[1]{apic_id} == 2, "cpus with gapped APIC IDs");
ok($j->{fired} == $j->{handled} && $j->{fired} > 0, "every fired vector handled once ($j->{fired})");
ok($j->{wrong_cpu} == 0, "no interrupt on a CPU uMSI did not choose");
my %dev = map { $_->{name} => $_ } @{$j->{devices}};
ok($dev{nvme}{mode} eq 'msix' && $dev{nvme}{granted} == 9, "nvme: 9 MSI-X vectors");
ok($dev{xhci}{mode} eq 'msi' && $dev{xhci}{granted} == 16, "xhci: 16 MSI messages");
ok($dev{legacy}{mode} eq 'intx', "legacy device on INTx");
my %pairs;
my $dup = 0;
for my $d (@{$j->{devices}}) {
	for my $v (@{$d->{vectors}}) {
		next if $d->{mode} eq 'intx';
		$dup++ if $pairs{"$v->{apic_id}/$v->{vector}"}++;
	}
}
ok($dup == 0, "no (APIC ID, vector) pair used twice");

($rc, $out) = run("sim --json $root/examples/storage-server.umsi");
$j = eval { decode_json($out) };
ok($rc == 0 && $j, "288 CPUs, 32 NVMe x 129 and 8 NICs x 256 fit") or print "# rc=$rc\n";
my $total = 0; $total += $_->{granted} for @{$j->{devices}};
ok($total == 32 * 129 + 8 * 256, "all $total vectors granted");
my %used = map { $_->{cpu} => 1 } map { @{$_->{vectors}} } @{$j->{devices}};
ok(keys(%used) == 288, "spread over all 288 CPUs (" . scalar(keys %used) . ")");

($rc, $out) = run("sim $root/examples/too-small.umsi");
ok($rc == 1, "exit 1 when a device does not get what it asked for");
ok($out =~ /did not get what they asked for/ && $out =~ /nic/, "names the device and why") or print "# $out";

($rc, $out) = run("sim $root/examples/gapped-apic.umsi --json");
$j = eval { decode_json($out) };
ok($j && !grep({ $_->{apic_id} == 300 } map { @{$_->{vectors}} } @{$j->{devices}}),
   "APIC ID 300 is never a target without extended destination IDs");

my ($fh, $bad) = tempfile(UNLINK => 1);
print $fh "cpus 4\ndevice x msi=3\n";
close $fh;
($rc, $out) = run("sim $bad");
ok($rc == 2 && $out =~ /:2: msi= takes 1, 2, 4, 8, 16 or 32/, "bad input: exit 2, names line and problem") or print "# $out";
open $fh, '>', $bad; print $fh "cpus 4\nfrobnicate\n"; close $fh;
($rc, $out) = run("sim $bad");
ok($rc == 2 && $out =~ /:2: unknown keyword 'frobnicate'/, "unknown keyword named");
($rc, $out) = run("sim /nonexistent/file");
ok($rc == 2 && $out =~ /cannot read/, "missing file reported");
print "1..$n\n";
