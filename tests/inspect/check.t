#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# `umsi inspect --check`: each fault the issue lists, planted alone in a
# dump and in a made-up sysfs/procfs tree (--sysroot), is found exactly
# once, on the right function and entry, and nothing else is: one line per
# finding, the same findings in --json, exit 0 (nothing found), 1
# (findings), 2 (could not inspect). On the real dumps, the findings equal
# those computed independently from `lspci -F FILE -vvv` (the faults a
# dump can show: Bus Master, Function Mask, Multiple Message Enable, MSI
# pending bits, two functions sending one message).
use strict;
use warnings;
use JSON::PP;
use Test::More;
use File::Temp qw(tempdir);
use File::Path qw(make_path);
use FindBin;
require "$FindBin::Bin/lib.pl";

our ($UMSI, $DUMPS, $ROOT);
plan skip_all => "$UMSI is not built" unless -x $UMSI;

my $tmp = tempdir(CLEANUP => 1);

# x86 interrupt message address and data (Intel SDM 11.11).
sub addr { my ($dest, %o) = @_;
	0xfee00000 | ($dest & 0xff) << 12 | (($dest >> 8) & 0x7f) << 5 |
	($o{logical} ? 4 : 0) | ($o{remap} ? 0x10 : 0) }
sub data { my ($vec, %o) = @_; $vec | ($o{dm} // 0) << 8 }

# A function with MSI at 0x50 (64-bit address).
sub msi_fn {
	my (%o) = @_;
	my $c = cfg_new(0x8086, 0x10d3);
	cfg_w16($c, 4, $o{cmd} // 0x0006);
	cap_list($c, [0x50, 0x05]);
	my $ctrl = ($o{enabled} // 1) | ($o{mmc} // 0) << 1 | ($o{mme} // 0) << 4 |
		   0x80 | ($o{maskable} ? 0x100 : 0);
	cfg_w16($c, 0x52, $ctrl);
	cfg_w32($c, 0x54, $o{addr} // addr(0));
	cfg_w32($c, 0x58, 0);
	cfg_w16($c, 0x5c, $o{data} // data(0x30));
	cfg_w32($c, 0x60, $o{mask} // 0);
	cfg_w32($c, 0x64, $o{pending} // 0);
	return $c;
}

# A function with MSI-X at 0x70: $n entries, table at BAR0 + 0, PBA at
# BAR0 + 0x800.
sub msix_fn {
	my ($n, %o) = @_;
	my $c = cfg_new(0x1af4, 0x1041);
	cfg_w16($c, 4, $o{cmd} // 0x0006);
	cfg_w32($c, 0x10, 0xfe000000);
	cap_list($c, [0x70, 0x11]);
	cfg_w16($c, 0x72, ($o{enabled} // 1) << 15 | ($o{fmask} ? 0x4000 : 0) | ($n - 1));
	cfg_w32($c, 0x74, 0);
	cfg_w32($c, 0x78, 0x800);
	return $c;
}

# BAR0 bytes: entries [address, data, ctrl], pending bits.
sub bar0 {
	my ($entries, $pba) = @_;
	my $b = join('', map { pack('VVVV', $_->[0], 0, $_->[1], $_->[2]) } @$entries);
	$b .= "\0" x (0x800 - length $b);
	return $b . pack('VV', $pba // 0, 0) . "\0" x (0x1000 - 0x808);
}

sub check_run {
	my (@args) = @_;
	my ($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--check', @args);
	my ($jrc, $json) = run_cmd($UMSI, 'inspect', '--check', '--json', @args);
	my $doc = eval { decode_json($json) };
	return ($rc, $out, $err, $jrc, $doc);
}

# "bdf where [check]" of every finding line, sorted.
sub text_findings {
	my ($out) = @_;
	return [sort map { /^(\S+)(?: \(line \d+\))? (MSI(?:-X)?(?: (?:entry|message) \d+)?) \[([a-z-]+)\]: / ?
			   "$1 $2 [$3]" : () } split /\n/, $out];
}
sub json_findings {
	my ($doc) = @_;
	return [sort map {
		my $w = $_->{capability} eq 'msix' ? 'MSI-X' : 'MSI';
		$w .= defined $_->{entry} ? ($_->{capability} eq 'msix' ? ' entry ' : ' message ') . $_->{entry} : '';
		"$_->{bdf} $w [$_->{check}]" } @{$doc->{findings} // []}];
}

# ---- a dump with every fault configuration space can show ------------------
my $dump = "$tmp/faults.dump";
write_file($dump, join('',
	dump_text('00:01.0', msi_fn(addr => addr(1), data => data(0x41))),
	dump_text('00:02.0', msi_fn(cmd => 0x0002, addr => addr(1), data => data(0x42))),
	dump_text('00:03.0', msix_fn(4, fmask => 1)),
	dump_text('00:04.0', msi_fn(mmc => 2, mme => 3, addr => addr(2), data => data(0x60))),
	dump_text('00:05.0', msi_fn(mmc => 2, mme => 2, maskable => 1, addr => addr(3),
				    data => data(0x70), mask => 0b0110, pending => 0b1010)),
	dump_text('00:06.0', msi_fn(addr => addr(2), data => data(0x51))),
	dump_text('00:07.0', msi_fn(addr => addr(2), data => data(0x51))),
	dump_text('00:08.0', msi_fn(addr => addr(0x150, remap => 1), data => 0)),
	dump_text('00:09.0', msi_fn(enabled => 0, cmd => 0, mmc => 0, mme => 5)),
	dump_text('00:0a.0', msix_fn(2, enabled => 0, fmask => 1, cmd => 0))));
my ($rc, $out, $err, $jrc, $doc) = check_run('--dump', $dump);
is($rc, 1, 'dump with faults: exit 1') or diag($out, $err);
is($jrc, 1, 'and with --json');
my $want = [sort
	'0000:00:02.0 MSI [bus-master-off]',
	'0000:00:03.0 MSI-X [function-masked]',
	'0000:00:04.0 MSI [mme-over-capable]',
	'0000:00:05.0 MSI message 1 [pending-masked]',
	'0000:00:06.0 MSI message 0 [same-message]',
	'0000:00:07.0 MSI message 0 [same-message]'];
is_deeply(text_findings($out), $want,
	  'each fault found once, on its function and entry; clean, disabled and remapped functions have none')
	or diag($out);
is(scalar(grep { /^0000:/ } split /\n/, $out), scalar @$want, 'one line per finding');
is_deeply(json_findings($doc), $want, '--json carries the same findings');
like($out, qr/^0000:00:02\.0 MSI \[bus-master-off\]: MSI is enabled but Bus Master Enable is clear .*interrupts are lost$/m,
     'a finding says what is wrong and why it matters');
like($out, qr/^0000:00:06\.0 MSI message 0 \[same-message\]: sends vector 0x51 to physical APIC ID 0x2, as 0000:00:07\.0 MSI message 0 does, without interrupt remapping/m,
     'same-message names the other function');
like($out, qr/^0000:00:04\.0 MSI \[mme-over-capable\]: Multiple Message Enable allows 8 messages but the capability offers 4/m,
     'mme-over-capable gives both counts');
like($out, qr/^not checked: a dump holds configuration space only: MSI-X entries/m,
     'what a dump cannot show is said');
like($out, qr/^not checked: 1 message uses the remappable format/m, 'and that a remapped message is not compared');
like($out, qr/^check: 6 findings in 6 functions; 10 functions checked$/m, 'summary line');
is($doc->{functions_checked}, 10, 'JSON: functions_checked');
ok(@{$doc->{not_checked}} >= 2, 'JSON: not_checked');
ok($doc->{devices} && @{$doc->{devices}} == 10, 'JSON: the full report too');

# A clean dump, a short one, bad input.
write_file("$tmp/clean.dump", dump_text('00:01.0', msi_fn(addr => addr(1), data => data(0x41))) .
			      dump_text('00:02.0', msix_fn(8)));
($rc, $out) = check_run('--dump', "$tmp/clean.dump");
is($rc, 0, 'clean dump: exit 0');
like($out, qr/^check: no findings; 2 functions checked$/m, 'clean dump: no findings');
write_file("$tmp/short.dump", dump_text('00:01.0', msi_fn(), 4));
($rc, $out, $err) = check_run('--dump', "$tmp/short.dump");
is($rc, 2, 'lspci -x dump (64 bytes): exit 2, could not inspect');
like($err, qr/nothing could be checked: no function in the dump has its capabilities \(use lspci -xxx\)/,
     'and says why');
($rc, undef, $err) = check_run('--dump', "$tmp/absent");
is($rc, 2, 'missing file: exit 2');
like($err, qr/cannot read .*absent/, 'and says so');
write_file("$tmp/junk.dump", "not a dump\n");
($rc, undef, $err) = check_run('--dump', "$tmp/junk.dump");
is($rc, 2, 'nothing decodable: exit 2');
($rc) = run_cmd($UMSI, 'inspect', '--check', '--bogus');
is($rc, 2, 'usage error: exit 2');
# One address twice: the lines tell them apart.
write_file("$tmp/repeat.dump", dump_text('00:02.0', msi_fn(cmd => 0x0002, data => data(0x31))) .
			       dump_text('00:02.0', msi_fn(cmd => 0x0006, data => data(0x32))) .
			       dump_text('00:02.0', msi_fn(cmd => 0x0000, data => data(0x33))));
(undef, $out) = check_run('--dump', "$tmp/repeat.dump");
is_deeply([grep { /^0000/ } split /\n/, $out],
	  ['0000:00:02.0 (line 1) MSI [bus-master-off]: MSI is enabled but Bus Master Enable is clear in the Command register (0x0002): an interrupt message is a memory write, which the function may not issue, so its interrupts are lost',
	   '0000:00:02.0 (line 37) MSI [bus-master-off]: MSI is enabled but Bus Master Enable is clear in the Command register (0x0000): an interrupt message is a memory write, which the function may not issue, so its interrupts are lost'],
	  'an address given twice: each finding names its function by the header line');
($rc, $out) = check_run('--dump', $dump, '-s', '00:05.0');
is_deeply(text_findings($out), ['0000:00:05.0 MSI message 1 [pending-masked]'], '-s: that function only');

# ---- a made-up machine with each live fault --------------------------------
sub machine {
	my ($root, %fault) = @_;
	make_path("$root/proc", "$root/dev");
	# Four CPUs with gapped APIC IDs 0, 2, 4, 6.
	write_file("$root/proc/cpuinfo", join('', map {
		"processor\t: $_\nvendor_id\t: GenuineIntel\napicid\t\t: " . 2 * $_ .
		"\ninitial apicid\t: " . 2 * $_ . "\nflags\t\t: fpu apic\n\n" } 0 .. 3));
	my @e = (
		[addr(2), data(0x41), 0],               # 0: IRQ 33, CPU 1
		[addr(2), data(0x42), 0],               # 1: IRQ 34
		[addr(4), data(0x43), 0],               # 2: IRQ 35
		[0, 0, 1],                              # 3: masked, unused
		[addr(6), data(0x44), 1],               # 4: IRQ 36, masked
		[0, 0, 1], [0, 0, 1], [0, 0, 1],
	);
	my %aff = (33 => 1, 34 => 1, 35 => 2, 36 => 3, 40 => 2, 41 => 0, 42 => 0, 60 => 3);
	my $pba = 0;
	$aff{34} = 0 if $fault{affinity};                       # sent to CPU 1
	$e[2][0] = addr(5) if $fault{nocpu};                    # APIC 5: no CPU
	$e[3] = [addr(4), data(0x45), 0] if $fault{unowned};    # no IRQ
	$e[5] = [0, 0, 0] if $fault{stale};                     # no IRQ, address 0
	$pba |= 1 << 4 if $fault{pending};                      # masked entry 4
	$pba |= 1 << 1 if $fault{pending_unmasked};             # fine: unmasked
	my %irqs = map { $_ => 'msix' } 33 .. 36;
	sysfs_fn($root, '0000:00:03.0', msix_fn(8, fmask => $fault{fmask}),
		 bars => { 0 => [0xfe000000, 0x1000] }, res => { 0 => bar0(\@e, $pba) },
		 irqs => \%irqs);
	# 00:04.0 entry 0: APIC 4 vector 0x43 (00:03.0 entry 2's) with
	# same-message, else vector 0x50.
	my @e4 = ([addr(4), data($fault{same} ? 0x43 : 0x50), 0],
		  [addr(1, remap => 1), 0, 0], [addr(1, logical => 1), data(0x51), 0], [0, 0, 1]);
	sysfs_fn($root, '0000:00:04.0', msix_fn(4, cmd => $fault{bme} ? 0x0002 : 0x0006),
		 bars => { 0 => [0xfe100000, 0x1000] }, res => { 0 => bar0(\@e4, 0) },
		 irqs => { 40 => 'msix', 41 => 'msix', 42 => 'msix' });
	# 00:06.0: MSI to APIC 6 (CPU 3), 2 of 4 messages enabled.
	sysfs_fn($root, '0000:00:06.0', msi_fn(mmc => 2, mme => $fault{mme} ? 3 : 1,
					       addr => addr(6), data => data(0x60)),
		 irqs => { 60 => 'msi', 61 => 'msi' });
	$aff{61} = 3;
	write_file("$root/proc/interrupts", join('',
		"           CPU0       CPU1       CPU2       CPU3\n",
		"  0:         41          0          0          0   IO-APIC   2-edge      timer\n",
		(map { sprintf("%3d:          0          5          0          0  PCI-MSIX-0000:00:03.0 %d-edge  q%d\n",
			       33 + $_, $_ == 3 ? 4 : $_, $_) } 0 .. 3),
		" 40:          0          0          7          0  PCI-MSIX-0000:00:04.0 0-edge  r0\n",
		" 41:          0          0          0          0  PCI-MSIX-0000:00:04.0 1-edge  r1\n",
		" 42:          0          0          0          0  PCI-MSIX-0000:00:04.0 2-edge  r2\n",
		" 60:          0          0          0          9  PCI-MSI-0000:00:06.0 0-edge  m0\n",
		" 61:          0          0          0          1  PCI-MSI-0000:00:06.0 1-edge  m1\n"));
	for my $irq (keys %aff) {
		make_path("$root/proc/irq/$irq");
		write_file("$root/proc/irq/$irq/effective_affinity_list", "$aff{$irq}\n");
	}
}

my %cases = (
	clean => [],
	affinity => ['0000:00:03.0 MSI-X entry 1 [outside-affinity]'],
	nocpu => ['0000:00:03.0 MSI-X entry 2 [outside-affinity]'],
	unowned => ['0000:00:03.0 MSI-X entry 3 [unowned-entry]'],
	stale => ['0000:00:03.0 MSI-X entry 5 [unowned-entry]'],
	pending => ['0000:00:03.0 MSI-X entry 4 [pending-masked]'],
	pending_unmasked => [],
	same => ['0000:00:03.0 MSI-X entry 2 [same-message]', '0000:00:04.0 MSI-X entry 0 [same-message]'],
	fmask => ['0000:00:03.0 MSI-X [function-masked]'],
	bme => ['0000:00:04.0 MSI-X [bus-master-off]'],
	mme => ['0000:00:06.0 MSI [mme-over-capable]'],
);
for my $case (sort keys %cases) {
	my $root = "$tmp/m-$case";
	machine($root, $case => 1);
	($rc, $out, $err, $jrc, $doc) = check_run('--sysroot', $root);
	my @want = sort @{$cases{$case}};
	is($rc, @want ? 1 : 0, "sysroot $case: exit " . (@want ? 1 : 0)) or diag($out, $err);
	is_deeply(text_findings($out), \@want, "sysroot $case: " . (@want ? "found: @want" : 'no findings'))
		or diag($out);
	is_deeply(json_findings($doc), \@want, "sysroot $case: --json agrees");
}

# Messages of the made-up machine, in words.
machine("$tmp/m-words", affinity => 1, nocpu => 1, unowned => 1, pending => 1);
(undef, $out) = check_run('--sysroot', "$tmp/m-words");
like($out, qr/^0000:00:03\.0 MSI-X entry 1 \[outside-affinity\]: IRQ 34 sends vector 0x42 to CPU 1 \(APIC ID 0x2\), outside its effective affinity 0:/m,
     'outside-affinity: IRQ, vector, CPU and APIC ID, affinity');
like($out, qr/^0000:00:03\.0 MSI-X entry 2 \[outside-affinity\]: IRQ 35 sends to APIC ID 0x5, which no CPU of this machine has/m,
     'a destination that is no CPU');
like($out, qr/^0000:00:03\.0 MSI-X entry 3 \[unowned-entry\]: the entry is unmasked but no IRQ of Linux owns it: .*vector 0x45 of APIC ID 0x4/m,
     'unowned-entry: where its messages go');
like($out, qr/^0000:00:03\.0 MSI-X entry 4 \[pending-masked\]: Pending bit set while the entry's Mask bit is set/m,
     'pending-masked on an MSI-X entry');
like($out, qr/^not checked: 1 message uses the remappable format/m, 'remapped entry: not compared, said');
like($out, qr/^not checked: 1 message uses logical destination mode/m, 'logical entry: not compared, said');

# What cannot be checked is said, and an unreadable machine is exit 2.
machine("$tmp/m-nocpuinfo");
unlink("$tmp/m-nocpuinfo/proc/cpuinfo");
(undef, $out) = check_run('--sysroot', "$tmp/m-nocpuinfo");
like($out, qr/^not checked: \/proc\/cpuinfo names no APIC IDs: the destinations of \d+ messages are not compared with affinity/m,
     'no /proc/cpuinfo: affinity not compared, said');
machine("$tmp/m-noaff");
unlink("$tmp/m-noaff/proc/irq/33/effective_affinity_list");
(undef, $out) = check_run('--sysroot', "$tmp/m-noaff");
like($out, qr/^not checked: 1 IRQ without a readable effective_affinity_list/m, 'an IRQ without affinity: said');
machine("$tmp/m-untable");
unlink("$tmp/m-untable/sys/bus/pci/devices/0000:00:04.0/resource0");
(undef, $out) = check_run('--sysroot', "$tmp/m-untable");
like($out, qr/^not checked: the MSI-X tables of 1 function with MSI-X enabled could not be read/m,
     'an unreadable table: said');
my $short = "$tmp/m-short";
sysfs_fn($short, '0000:00:03.0', msix_fn(8), cfg_len => 64);
($rc, $out, $err) = check_run('--sysroot', $short);
is($rc, 2, 'only 64 bytes of config space (not root): exit 2');
like($err, qr/nothing could be checked: no function's capabilities could be read \(run as root\)/, 'and says why');
($rc, undef, $err) = check_run('--sysroot', "$tmp/nowhere");
is($rc, 2, 'no /sys/bus/pci/devices: exit 2');

# ---- the real dumps, against lspci -----------------------------------------
SKIP: {
	skip 'lspci is not installed (Debian: pciutils)', 1
		unless system('sh', '-c', 'command -v lspci >/dev/null') == 0;
	my @files = dump_files();
	if (opendir(my $sd, "$ROOT/tests/data/sim-dumps")) {
		push @files, map { "$ROOT/tests/data/sim-dumps/$_" } grep { !/^\./ } readdir($sd);
	}
	my ($n, $found) = (0, 0);
	for my $file (sort @files) {
		next unless -f $file;
		my $name = $file =~ s{.*/}{}r;
		my @want = sort(lspci_findings($file));
		($rc, $out) = check_run('--dump', $file);
		my $got = text_findings($out);
		is_deeply($got, \@want, "$name: findings equal those computed from lspci -F -vvv (" .
			  scalar(@want) . ')') or diag($out);
		is($rc, @want ? 1 : 0, "$name: exit status");
		$n++;
		$found += @want;
	}
	diag("$n dumps checked against lspci; $found findings");
}

# The dump-visible faults, from lspci's own words.
sub lspci_findings {
	my ($file) = @_;
	my (@f, $bdf, $bm, %msg, @senders);
	my $cur;
	for (split /\n/, `lspci -F '$file' -vvv 2>/dev/null`) {
		if (/^(?:([0-9a-f]{4,6}):)?([0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) /) {
			$bdf = sprintf('%04x', hex($1 // '0')) . ":$2";
			$bm = undef;
			$cur = undef;
		} elsif (/^\tControl: .*BusMaster([+-])/) {
			$bm = $1;
		} elsif (/^\tCapabilities: \[[0-9a-f]+\] MSI: Enable(.) Count=(\d+)\/(\d+) Maskable(.)/) {
			$cur = $1 eq '+' ? { kind => 'msi', en => $2, cap => $3, maskable => $4 } : undef;
			next unless $cur;
			push @f, "$bdf MSI [bus-master-off]" if ($bm // '+') eq '-';
			push @f, "$bdf MSI [mme-over-capable]" if $2 > $3;
		} elsif (/^\tCapabilities: \[[0-9a-f]+\] MSI-X: Enable(.) Count=\d+ Masked(.)/) {
			$cur = undef;
			next unless $1 eq '+';
			push @f, "$bdf MSI-X [bus-master-off]" if ($bm // '+') eq '-';
			push @f, "$bdf MSI-X [function-masked]" if $2 eq '+';
		} elsif (/^\tCapabilities:/) {
			$cur = undef;
		} elsif ($cur && /^\t\tAddress: ([0-9a-f]+)  Data: ([0-9a-f]+)/) {
			my ($a, $d) = (hex($1), hex($2));
			my $dm = ($d >> 8) & 7;
			next if ($a & 0xfff00000) != 0xfee00000 || ($a & 0x10) || ($dm != 0 && $dm != 1);
			my $n = $cur->{en} > 32 ? 32 : $cur->{en};
			my $base = ($d & 0xff) & ~($n - 1);
			my $dest = (($a >> 12) & 0xff) | ((($a >> 5) & 0x7f) << 8);
			# Vectors 0-15 are illegal: the APIC drops them.
			push @senders, map { [($a & 4 ? 'l' : 'p') . "$dest/" . ($base + $_), $bdf, $_] }
				grep { $base + $_ >= 16 } 0 .. $n - 1;
		} elsif ($cur && $cur->{maskable} eq '+' && /^\t\tMasking: ([0-9a-f]+)  Pending: ([0-9a-f]+)/) {
			my $both = hex($1) & hex($2);
			my $n = $cur->{en} > 32 ? 32 : $cur->{en};
			push @f, map { "$bdf MSI message $_ [pending-masked]" } grep { $both >> $_ & 1 } 0 .. $n - 1;
		}
	}
	my %by;
	push @{$by{$_->[0]}}, $_ for @senders;
	for my $g (values %by) {
		my %fns = map { $_->[1] => 1 } @$g;
		next if keys %fns < 2;
		push @f, map { "$_->[1] MSI message $_->[2] [same-message]" } @$g;
	}
	return @f;
}

done_testing();
