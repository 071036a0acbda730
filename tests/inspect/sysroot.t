#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# Live mode against a made-up machine (--sysroot): a directory tree with
# the sysfs and procfs files `umsi inspect` reads, whose resourceN and
# dev/mem are ordinary files holding MSI-X tables. This checks what the
# test VM cannot show: tables read through resourceN and through /dev/mem,
# each entry decoded and joined to its Linux IRQ (Linux 6.2+ and 6.1
# /proc/interrupts formats), a read that faults (SIGBUS), memory decoding
# off, a table past the end of its BAR, a 64-byte config space, and a
# kernel with neither resource files nor /dev/mem.
use strict;
use warnings;
use JSON::PP;
use Test::More;
use File::Temp qw(tempdir);
use File::Path qw(make_path);
use POSIX ();
use FindBin;
require "$FindBin::Bin/lib.pl";

our $UMSI;
plan skip_all => "$UMSI is not built" unless -x $UMSI;

my $root = tempdir(CLEANUP => 1);

sub le32 { pack('V*', @_) }

# An MSI-X function: table in BAR0 at $toff, PBA at $poff, $n entries.
sub msix_cfg {
	my ($n, $toff, $poff, %o) = @_;
	my $c = cfg_new(0x1af4, 0x1041);
	cfg_w16($c, 4, $o{cmd} // 0x0006);
	cfg_w32($c, 0x10, 0x10000);
	cap_list($c, [0x98, 0x11]);
	cfg_w16($c, 0x9a, 0x8000 | ($n - 1));
	cfg_w32($c, 0x9c, $toff);
	cfg_w32($c, 0xa0, $poff);
	return $c;
}

sub msi_cfg {
	my $c = cfg_new(0x8086, 0x2922);
	cfg_w16($c, 4, 0x0406);
	cap_list($c, [0x80, 0x05]);
	cfg_w16($c, 0x82, 0x0081 | 0x0004);   # enabled, 64-bit, MMC 4
	cfg_w32($c, 0x84, 0xfee02000);
	cfg_w16($c, 0x8c, 0x0031);
	return $c;
}

sub add_fn {
	my ($r, $bdf, $c, %o) = @_;
	my $d = "$r/sys/bus/pci/devices/$bdf";
	make_path("$d/msi_irqs");
	my $cfg = pack('C*', @$c);
	$cfg = substr($cfg, 0, $o{cfg_len}) if $o{cfg_len};
	write_file("$d/config", $cfg);
	my $res = '';
	for my $i (0 .. 6) {
		my ($s, $z) = $i == 0 && $o{bar0} ? @{$o{bar0}} : (0, 0);
		$res .= sprintf("0x%016x 0x%016x 0x%016x\n", $s, $z ? $s + $z - 1 : 0,
				$z ? 0x40200 : 0);
	}
	write_file("$d/resource", $res);
	write_file("$d/resource0", $o{resource0}) if defined $o{resource0};
	for my $irq (keys %{$o{irqs} // {}}) {
		write_file("$d/msi_irqs/$irq", "$o{irqs}{$irq}\n");
	}
}

# 0000:00:03.0: four MSI-X entries, read through resource0 (Linux 6.2+).
my $table = le32(0xfee01000, 0, 0x4041, 0) .         # dest 1, vector 0x41
	    le32(0xfee0300c, 0, 0x0122, 1) .         # logical, RH, lowpri, masked
	    le32(0xfee02a10, 0, 0x0005, 0) .         # remappable, handle 0x150
	    le32(0xfee12340, 0, 0x0030, 0);          # extended dest 0x1a12
my $bar = $table . ("\0" x (0x800 - length $table)) . le32(0b0010, 0) .
	  ("\0" x (0x1000 - 0x808));
add_fn($root, '0000:00:03.0', msix_cfg(4, 0, 0x800), bar0 => [0x10000, 0x1000],
       resource0 => $bar, irqs => { 33 => 'msix', 34 => 'msix' });

# 0000:00:04.0: MSI, Linux 6.1 format (hwirq = devfn << 11 | entry).
add_fn($root, '0000:00:04.0', msi_cfg(), irqs => { 40 => 'msi' });

# 0000:00:05.0: no resource0; table read through dev/mem (6.1 MSI-X).
add_fn($root, '0000:00:05.0', msix_cfg(2, 0x100, 0x200), bar0 => [0x20000, 0x1000],
       irqs => { 50 => 'msix', 51 => 'msix' });
# 0000:00:06.0: dev/mem shorter than the BAR: the read faults (SIGBUS).
add_fn($root, '0000:00:06.0', msix_cfg(2, 0, 0x800), bar0 => [0x100000, 0x1000]);
# 0000:00:07.0: memory decoding off.
add_fn($root, '0000:00:07.0', msix_cfg(2, 0, 0x800, cmd => 0x0000), bar0 => [0x30000, 0x1000]);
# 0000:00:08.0: only 64 bytes readable.
add_fn($root, '0000:00:08.0', msix_cfg(2, 0, 0x800), cfg_len => 64);
# 0000:00:09.0: the table runs past the end of its 4 KiB BAR.
add_fn($root, '0000:00:09.0', msix_cfg(4, 0xff8, 0x800), bar0 => [0x40000, 0x1000],
       resource0 => "\0" x 0x1000);

my $devmem = "\0" x 0x21000;
substr($devmem, 0x20100, 32) = le32(0xfee00000, 0, 0x0051, 0, 0xfee01000, 0, 0x0052, 0);
substr($devmem, 0x20200, 8) = le32(0b01, 0);
make_path("$root/dev");
write_file("$root/dev/mem", $devmem);

make_path(map { "$root/proc/irq/$_" } 33, 34, 40, 50, 51);
write_file("$root/proc/interrupts", <<'EOF');
           CPU0       CPU1       
  0:         41          0   IO-APIC   2-edge      timer
 33:          5          7  PCI-MSIX-0000:00:03.0    0-edge      virtio2-config
 34:          0         12  PCI-MSIX-0000:00:03.0    1-edge      virtio2-input.0
 40:          1          2  PCI-MSI 65536-edge      ahci[0000:00:04.0]
 50:          3          4  IR-PCI-MSI 81920-edge      nvme0q0
 51:          9          0  IR-PCI-MSI 81921-edge      nvme0q1
NMI:          0          0   Non-maskable interrupts
EOF
write_file("$root/proc/irq/33/effective_affinity_list", "1\n");
make_path("$root/sys/kernel/debug/irq/irqs");
write_file("$root/sys/kernel/debug/irq/irqs/50", <<'EOF');
handler:  handle_edge_irq
device:   0000:00:05.0
affinity: 0-1
effectiv: 1
domain:  IR-PCI-MSIX-0000:00:05.0-12
 hwirq:   0x0
 chip:    IR-PCI-MSIX-0000:00:05.0
  flags:   0x430
 parent:
    domain:  VECTOR
     hwirq:   0x32
     chip:    APIC
      flags:   0x0
     Vector:    37
     Target:     1
     move_in_progress: 0
EOF
write_file("$root/proc/irq/34/effective_affinity_list", "0\n");
write_file("$root/proc/irq/40/effective_affinity_list", "0-1\n");

my ($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--sysroot', $root, '--json');
is($rc, 0, 'made-up machine: exit 0');
my $doc = eval { decode_json($out) } or BAIL_OUT("no JSON: $@ $err");
my %dev = map { $_->{bdf} => $_ } @{$doc->{devices}};
sub errs { my $b = shift; join("\n", map { $_->{message} } grep { ($_->{bdf} // '') eq $b } @{$doc->{errors}}) }

is_deeply($doc->{cpus}, [0, 1], 'CPU columns from /proc/interrupts');

# 00:03.0 through resource0.
my $e = $dev{'0000:00:03.0'}{msix}{entries};
is(ref $e, 'ARRAY', 'resource0: table read') or diag($dev{'0000:00:03.0'}{msix}{entries_reason});
is(scalar @$e, 4, 'resource0: four entries');
is_deeply([@{$e->[0]}{qw(index address data masked pending dest_id dest_mode vector irq counts effective_affinity)}],
	  [0, '0xfee01000', '0x4041', JSON::PP::false, JSON::PP::false, 1, 'physical', 65, 33, [5, 7], '1'],
	  'entry 0: decoded and joined to IRQ 33 with its counts');
is_deeply([@{$e->[1]}{qw(masked pending dest_id dest_mode redirection_hint delivery_mode vector irq counts)}],
	  [JSON::PP::true, JSON::PP::true, 3, 'logical', JSON::PP::true, 'lowest-priority', 0x22, 34, [0, 12]],
	  'entry 1: masked, pending (PBA), logical, RH, lowest priority');
is_deeply([@{$e->[2]}{qw(remapped ir_handle dest_id irq)}], [JSON::PP::true, 0x150, undef, undef],
	  'entry 2: remappable format shown as an IR handle');
is($e->[3]{dest_id}, 0x1a12, 'entry 3: extended destination ID');

# 00:04.0 MSI with the 6.1 format.
my $m = $dev{'0000:00:04.0'}{msi};
is_deeply([@{$m->{irqs}[0]}{qw(index irq counts effective_affinity)}], [0, 40, [1, 2], '0-1'],
	  'MSI: Linux 6.1 "PCI-MSI <hwirq>" joined to entry 0');
is_deeply([@{$m->{message}}{qw(dest_id vector vectors)}], [2, 0x31, 1], 'MSI: message decoded');

# 00:05.0 through dev/mem, 6.1 MSI-X with IR- prefix.
$e = $dev{'0000:00:05.0'}{msix}{entries};
is(ref $e, 'ARRAY', 'dev/mem: table read') or diag($dev{'0000:00:05.0'}{msix}{entries_reason});
is_deeply([map { [$_->{vector}, $_->{dest_id}, $_->{pending}, $_->{irq}, $_->{counts}] } @$e],
	  [[0x51, 0, JSON::PP::true, 50, [3, 4]], [0x52, 1, JSON::PP::false, 51, [9, 0]]],
	  'dev/mem: entries, PBA and "IR-PCI-MSI <hwirq>" IRQs');

# Failures, each with its reason.
ok(!defined $dev{'0000:00:06.0'}{msix}{entries}, 'short dev/mem: no entries');
like($dev{'0000:00:06.0'}{msix}{entries_reason}, qr/read of .*dev\/mem failed/, 'short dev/mem: the fault is reported, not fatal');
like($dev{'0000:00:07.0'}{msix}{entries_reason}, qr/memory decoding is off/, 'memory decoding off: not read');
ok(!$dev{'0000:00:08.0'}{capabilities_read}, '64-byte config: capabilities not read');
like(errs('0000:00:08.0'), qr/only the first 64 bytes .*run as root/, '64-byte config: says why');
like(errs('0000:00:09.0'), qr/vector table \(0xff8-0x1037\) runs past the end of BAR 0 \(size 0x1000\)/,
     'table past the end of its BAR');
like($dev{'0000:00:09.0'}{msix}{entries_reason}, qr/impossible/, 'and it is not read');

# Text output carries the decoded table.
($rc, $out) = run_cmd($UMSI, 'inspect', '--sysroot', $root, '-s', '00:03.0');
like($out, qr/^\t\t\s+0  00000000fee01000  00004041  --  0x1\s+phys -   fixed  edge   0x41\s+33 1\s+5\/7$/m,
     'text: entry 0 with IRQ, affinity and counts');

# A kernel with neither resource files nor /dev/mem.
unlink("$root/dev/mem");
($rc, $out) = run_cmd($UMSI, 'inspect', '--sysroot', $root, '--json', '-s', '00:05.0');
$doc = decode_json($out);
like($doc->{devices}[0]{msix}{entries_reason}, qr/no resource files, no \/dev\/mem.*iomem=relaxed/,
     'neither interface: says exactly that, and what iomem=relaxed would and would not do');
like(join(' ', @{$doc->{notes}}), qr/no sysfs resourceN file .*no \/dev\/mem/, 'and a machine-wide note');
is($doc->{devices}[0]{msix}{irqs}[1]{irq}, 51, 'Linux IRQs still shown');
is_deeply([@{$doc->{devices}[0]{msix}{irqs}[0]}{qw(irq cpu_vector target_cpu)}], [50, 37, 1],
	  'debugfs: CPU vector and target CPU of IRQ 50');
is_deeply([@{$doc->{devices}[0]{msix}{irqs}[1]}{qw(cpu_vector target_cpu)}], [undef, undef],
	  'debugfs: unknown for IRQ 51 (no file)');
($rc, $out) = run_cmd($UMSI, 'inspect', '--sysroot', $root, '-s', '00:05.0');
like($out, qr/^\t\t\s+0\s+50\s+\?\s+0x25\s+1\s+3\/4 /m, 'text: vector 0x25 on CPU 1');

# FIFOs where sysfs and procfs have files: opening one for reading waits
# for a writer, for ever (`config` used to be opened that way). Each is
# refused without waiting and named with what it is; the function whose
# config space is a FIFO is a problem of that function, as an unreadable
# config space is, and the others are still decoded. Every run has a hang
# guard (timeout 30), which the old code did not meet.
{
	my $r = tempdir(CLEANUP => 1);
	sub fifo { my $f = shift; unlink($f); POSIX::mkfifo($f, 0600) or die "mkfifo $f: $!" }
	add_fn($r, '0000:00:03.0', msi_cfg(), irqs => { 40 => 'msi', 41 => 'msi' });
	add_fn($r, '0000:00:04.0', msi_cfg());
	fifo("$r/sys/bus/pci/devices/0000:00:04.0/config");
	add_fn($r, '0000:00:05.0', msix_cfg(2, 0, 0x800), bar0 => [0x20000, 0x1000]);
	fifo("$r/sys/bus/pci/devices/0000:00:05.0/resource0");
	make_path("$r/dev", "$r/proc/irq/40", "$r/sys/kernel/debug/irq/irqs",
		  "$r/sys/kernel/security");
	fifo("$r/dev/mem");
	fifo("$r/sys/bus/pci/devices/0000:00:03.0/msi_irqs/41");
	fifo("$r/proc/irq/40/effective_affinity_list");
	fifo("$r/sys/kernel/debug/irq/irqs/40");
	fifo("$r/sys/kernel/security/lockdown");
	fifo("$r/proc/cpuinfo");
	fifo("$r/proc/interrupts");

	my ($rc, $out, $err) = run_cmd('timeout', '30', $UMSI, 'inspect', '--sysroot', $r, '--json');
	is($rc, 0, 'FIFOs in the tree: no hang, exit 0 (the other functions decoded)') or diag($err);
	my $doc = eval { decode_json($out) } // { devices => [], errors => [], notes => [] };
	my %d = map { $_->{bdf} => $_ } @{$doc->{devices}};
	my $errs = sub { my $b = shift; join("\n", map { $_->{message} } grep { ($_->{bdf} // '') eq $b } @{$doc->{errors}}) };
	my $cfg = "$r/sys/bus/pci/devices/0000:00:04.0/config";
	like($errs->('0000:00:04.0'), qr/^\Q$cfg\E is a FIFO, not a regular file: its configuration space is not read$/m,
	     'config a FIFO: a problem of that function, naming the path');
	ok(!$d{'0000:00:04.0'}, 'config a FIFO: nothing decoded for it');
	ok($d{'0000:00:03.0'} && $d{'0000:00:03.0'}{msi}{enabled}, 'the function beside it decoded');
	for my $f ("sys/bus/pci/devices/0000:00:03.0/msi_irqs/41", "proc/irq/40/effective_affinity_list",
		   "sys/kernel/debug/irq/irqs/40") {
		like($errs->('0000:00:03.0'), qr/^\Q$r\/$f\E is a FIFO, not a regular file: not read$/m,
		     "$f a FIFO: named under its function");
	}
	like($errs->(''), qr/^\Q$r\E\/sys\/kernel\/security\/lockdown is a FIFO, not a regular file: not read$/m,
	     'lockdown a FIFO: named as a problem of the machine');
	my $notes = join("\n", @{$doc->{notes}});
	like($notes, qr/^\Q$r\E\/proc\/interrupts cannot be read \(a FIFO, not a regular file\): no per-CPU counts$/m,
	     '/proc/interrupts a FIFO: said in a note');
	like($notes, qr/^\Q$r\E\/proc\/cpuinfo cannot be read \(a FIFO, not a regular file\)/m,
	     '/proc/cpuinfo a FIFO: said in a note');
	like($d{'0000:00:05.0'}{msix}{entries_reason} // '',
	     qr/\Q$r\E\/sys\/bus\/pci\/devices\/0000:00:05\.0\/resource0 is a FIFO, not a regular file: not read; \Q$r\E\/dev\/mem is a FIFO, not a regular file: not read/,
	     'resource0 and dev/mem FIFOs: the table not read, both named');

	($rc, $out, $err) = run_cmd('timeout', '30', $UMSI, 'inspect', '--sysroot', $r);
	like($out, qr/^0000:00:04\.0: \Q$cfg\E is a FIFO, not a regular file/m,
	     'text: the same, no hang') or diag($out);

	# Only the function whose config space is a FIFO: nothing decoded.
	my $r1 = tempdir(CLEANUP => 1);
	add_fn($r1, '0000:00:04.0', msi_cfg());
	fifo("$r1/sys/bus/pci/devices/0000:00:04.0/config");
	my $cfg1 = "$r1/sys/bus/pci/devices/0000:00:04.0/config";
	($rc, $out, $err) = run_cmd('timeout', '30', $UMSI, 'inspect', '--sysroot', $r1);
	is($rc, 1, 'only a FIFO config: exit 1, nothing decoded (as for an unreadable config)');
	like($out, qr/^0000:00:04\.0: \Q$cfg1\E is a FIFO, not a regular file: its configuration space is not read$/m,
	     'only a FIFO config: the path and what it is') or diag($out);
	like($err, qr/nothing could be decoded/, 'only a FIFO config: stderr says nothing was decoded');
	($rc, $out, $err) = run_cmd('timeout', '30', $UMSI, 'inspect', '--sysroot', $r1, '--check');
	is($rc, 2, 'only a FIFO config, --check: exit 2, could not inspect');
	like($out, qr/^error: 0000:00:04\.0: \Q$cfg1\E is a FIFO/m, '--check: the problem listed');
}

done_testing();
