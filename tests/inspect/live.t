#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# `umsi inspect` on this very machine. It must run, agree with the live
# `lspci -vvv` on every MSI/MSI-X field, decode the MSI-X table where the
# kernel lets it be read and otherwise say why not, and show what Linux
# exposes: each vector's IRQ (msi_irqs), per-CPU counts and effective
# affinity. Under strace, it must open nothing for writing and map nothing
# writable. What it could not read is printed in the test log.
use strict;
use warnings;
use JSON::PP;
use Test::More;
use FindBin;
require "$FindBin::Bin/lib.pl";

our $UMSI;
plan skip_all => "$UMSI is not built" unless -x $UMSI;
my $sys = '/sys/bus/pci/devices';
plan skip_all => "$sys is absent (not Linux, or no PCI)" unless -d $sys;

my ($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--json');
is($rc, 0, 'live: exit 0') or diag($err);
my $doc = eval { decode_json($out) };
ok($doc, 'live: JSON parses') or BAIL_OUT($@);
my %dev = map { $_->{bdf} => $_ } @{$doc->{devices}};
diag("note: $_") for @{$doc->{notes}};
diag("error: " . ($_->{bdf} // '-') . ": $_->{message}") for @{$doc->{errors}};

opendir(my $d, $sys) or die;
my @fns = sort grep { !/^\./ } readdir($d);
closedir($d);
is_deeply([sort keys %dev], \@fns, 'every function in sysfs is listed');

if ($> != 0) {
	like(join(' ', @{$doc->{notes}}), qr/not running as root.*64 bytes/,
	     'not root: says only 64 bytes are readable and why');
	done_testing();
	exit 0;
}

# The live lspci is the oracle for the capability fields.
SKIP: {
	skip 'lspci is not installed', 1
		unless system('sh', '-c', 'command -v lspci >/dev/null') == 0;
	my $want = lspci_caps('-D');
	for my $bdf (sort keys %$want) {
		for my $kind (qw(msi msix)) {
			my $w = $want->{$bdf}{$kind} or next;
			my @bad = compare_cap($w, $dev{$bdf}{$kind} // {});
			ok(!@bad, "$bdf $kind: agrees with lspci -vvv") or diag(join("\n", @bad));
		}
	}
}

my $ncpu = scalar @{$doc->{cpus} // []};
ok($ncpu > 0, "CPU columns from /proc/interrupts ($ncpu)");

for my $bdf (sort keys %dev) {
	my $v = $dev{$bdf};
	ok($v->{capabilities_read}, "$bdf: capabilities read as root");
	my %irq;
	if (opendir(my $m, "$sys/$bdf/msi_irqs")) {
		%irq = map { $_ => 1 } grep { /^\d+$/ } readdir($m);
		closedir($m);
	}
	my @ours = map { @{$_->{irqs} // []} } grep { $_ } @$v{qw(msi msix)};
	is_deeply([sort { $a <=> $b } map { $_->{irq} } @ours], [sort { $a <=> $b } keys %irq],
		  "$bdf: IRQs are those of msi_irqs");
	for my $q (@ours) {
		is(scalar @{$q->{counts} // []}, $ncpu, "$bdf IRQ $q->{irq}: one count per CPU");
		ok(defined $q->{index}, "$bdf IRQ $q->{irq}: entry known ($q->{chip})");
		my $aff = "/proc/irq/$q->{irq}/effective_affinity_list";
		if (open(my $a, '<', $aff)) {
			chomp(my $want = <$a> // '');
			is($q->{effective_affinity}, $want, "$bdf IRQ $q->{irq}: effective affinity $want");
		}
	}
	my $x = $v->{msix} or next;
	if ($x->{entries}) {
		is(scalar @{$x->{entries}}, $x->{table_size}, "$bdf: whole MSI-X table read");
		for my $e (@{$x->{entries}}) {
			next unless $e->{irq} && $x->{enabled} && !$x->{function_mask};
			ok($e->{x86} && defined($e->{vector}) || $e->{remapped},
			   "$bdf entry $e->{index}: a live vector decodes as an x86 message");
		}
	} else {
		like($x->{entries_reason},
		     qr/resource\d|\/dev\/mem|memory decoding|impossible/,
		     "$bdf: table not read, and the reason names what refused");
		diag("$bdf: MSI-X table not read: $x->{entries_reason}");
	}
}

# Text mode says the same plainly.
($rc, $out) = run_cmd($UMSI, 'inspect');
is($rc, 0, 'text: exit 0');
my @unread = grep { $_->{msix} && !$_->{msix}{entries} } values %dev;
like($out, qr/Table: not read: /, 'text: says which tables were not read') if @unread;

# The same run as an unprivileged user: 64 bytes, and a note saying so.
SKIP: {
	skip 'setpriv is not installed', 2
		unless system('sh', '-c', 'command -v setpriv >/dev/null') == 0;
	my ($urc, $uout) = run_cmd('setpriv', '--reuid=65534', '--regid=65534',
				   '--clear-groups', $UMSI, 'inspect', '--json');
	my $u = eval { decode_json($uout) };
	skip "cannot run $UMSI as uid 65534 (exit $urc)", 2 unless $u;
	like(join(' ', @{$u->{notes}}), qr/not running as root.*first 64 bytes/,
	     'unprivileged: a note says only 64 bytes are readable, and why');
	ok(!grep({ $_->{capabilities_read} } @{$u->{devices}}) &&
	   grep({ $_->{message} =~ /only the first 64 bytes/ } @{$u->{errors}}),
	   'unprivileged: no capability claimed, each function says why');
}

SKIP: {
	skip 'strace is not installed (the no-write check needs it)', 2
		unless system('sh', '-c', 'command -v strace >/dev/null') == 0;
	my $log = "/tmp/umsi-inspect-strace.$$";
	run_cmd('strace', '-f', '-qq', '-e', 'trace=open,openat,mmap,pwrite64,write',
		'-o', $log, $UMSI, 'inspect', '--json');
	open(my $l, '<', $log) or die;
	my @lines = <$l>;
	close($l);
	unlink($log);
	my @wr = grep { /open(at)?\(.*"(\/sys|\/dev|\/proc)[^"]*".*O_(WRONLY|RDWR)/ } @lines;
	ok(!@wr, 'strace: nothing under /sys, /dev, /proc opened for writing') or diag(@wr);
	my @mw = grep { /mmap\(.*PROT_WRITE.*MAP_SHARED/ } @lines;
	ok(!@mw, 'strace: no shared writable mapping') or diag(@mw);
}
done_testing();
