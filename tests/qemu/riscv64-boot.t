#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# The riscv64 kernel (build/riscv64/umsi-kernel, make kernel-riscv64) on
# QEMU virt with the AIA (aplic-imsic): OpenSBI starts it in S-mode, it
# reads the device tree, brings every hart up through SBI HSM, enables
# each hart's S-level IMSIC interrupt file, enumerates PCI through ECAM
# (bus numbers and BARs: nobody else assigns them on this machine), and
# points edu's MSI at each hart's file in turn: each hart must claim its
# identity through stopei, and no other hart anything.
#
# QEMU's own view backs the kernel's: with -trace memory_region_ops_write
# QEMU logs every write that reaches the IMSIC ('riscv.imsic'), so the
# message's address (the file) and data (the identity) are seen as the
# device model sent them, not as the kernel reports them.
#
# The kernel runs its raw probe (umsi.msiprobe) and leaves the library
# out (umsi.nolib); tests/qemu/riscv64-umsi.t runs it with uMSI.
#
# Boots -smp 1, 4 and 5 with edu behind a pcie-root-port, -smp 2 with edu
# on the root bus and another behind a root port and a pcie-pci-bridge
# (two bridge levels), -smp 4 with the secondaries entering at _start
# (the OpenSBI v1.1 race start.S copes with), and once without the AIA
# (the kernel must say it has no IMSIC and fail).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use JSON::PP;
use Test::More;
use UmsiQemu;

my $QEMU = $ENV{QEMU_RISCV64} // 'qemu-system-riscv64';
my $KERNEL = $ENV{UMSI_RISCV64_KERNEL} // "$UmsiQemu::BUILD/riscv64/umsi-kernel";

plan skip_all => "$QEMU not installed"
	unless system("command -v $QEMU >/dev/null 2>&1") == 0;
plan skip_all => "$KERNEL not built (make kernel-riscv64)" unless -f $KERNEL;

my $IMSIC_S = 0x28000000;	# QEMU virt's S-level IMSIC, 4 KiB per hart
my $FIRST_ID = 5;		# CPU i gets identity 5 + i

sub slurp {
	my ($f) = @_;
	open(my $fh, '<', $f) or return '';
	local $/;
	my $t = <$fh>;
	close($fh);
	return $t // '';
}

# Boot under timeout; the kernel ends QEMU through the sifive_test
# finisher with status 33 (PASS) or 35 (FAIL), as on x86.
sub boot {
	my (%o) = @_;
	my $dir = tempdir('umsi-rv64-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my @cmd = ('timeout', '-k', '5', 60, $QEMU,
		   '-machine', $o{machine} // 'virt,aia=aplic-imsic',
		   '-m', '256', '-smp', $o{smp}, '-nographic', '-no-reboot',
		   '-bios', 'default', '-kernel', $KERNEL,
		   '-append', 'umsi.msiprobe umsi.nolib ' . ($o{append} // ''),
		   '-trace', 'memory_region_ops_write', '-D', "$dir/trace.log",
		   @{$o{devices} // []});
	my $out = "$dir/serial.log";
	system(join(' ', map { "'$_'" } @cmd) . " </dev/null >'$out' 2>&1");
	my $rc = $? >> 8;
	my $text = slurp($out);
	$text =~ s/\r//g;
	my @lines = split(/\n/, $text);
	my @umsi;
	for (@lines) {
		next unless /^UMSI (\{.*\})\s*$/;
		push @umsi, eval { decode_json($1) } // { event => 'unparsable' };
	}
	# MSI writes into the S-level files, as QEMU's memory core saw them.
	my @msi;
	for (split(/\n/, slurp("$dir/trace.log"))) {
		next unless /memory_region_ops_write .*addr (0x[0-9a-f]+) value (0x[0-9a-f]+) size 4 name 'riscv.imsic'/;
		my ($a, $v) = (hex($1), hex($2));
		push @msi, [$a, $v] if $a >= $IMSIC_S && $a < $IMSIC_S + 0x1000 * 64;
	}
	my %by;
	push @{$by{$_->{event} // ''}}, $_ for @umsi;
	return { rc => $rc, exit => UmsiQemu::verdict($rc), text => $text,
		 lines => \@lines, ev => \%by, msi => \@msi,
		 cmd => join(' ', @cmd) };
}

sub check_boot {
	my ($r, $ncpu, $edus) = @_;
	is($r->{exit}, 'pass', 'kernel exits with PASS');
	my $plat = ($r->{ev}{platform} // [])->[0] // {};
	is($plat->{imsic}, sprintf('0x%x', $IMSIC_S), 'S-level IMSIC from the device tree');
	is($plat->{num_ids}, 255, 'riscv,num-ids');
	is($plat->{uart}, '0x10000000', 'UART from /chosen stdout-path');
	ok($plat->{msi_parent_is_imsic}, 'PCI host msi-parent is the S-level IMSIC');

	my $ready = ($r->{ev}{ready} // [])->[0];
	ok($ready, 'UMSI ready line');
	my @cpus = @{$ready->{cpus} // []};
	is(scalar @cpus, $ncpu, "$ncpu CPUs");
	is_deeply([sort { $a <=> $b } map { $_->{hart} } @cpus], [0 .. $ncpu - 1],
		  'hart IDs 0..n-1');
	is(scalar(grep { $_->{online} && $_->{imsic} } @cpus), $ncpu,
	   'every CPU online with a delivering interrupt file');
	is_deeply([map { hex($_->{file}) } @cpus],
		  [map { $IMSIC_S + 0x1000 * $_->{hart} } @cpus],
		  'interrupt file of hart h at IMSIC + h * 4 KiB');
	is(scalar(grep { /^cpu \d+ hart \d+ up/ } @{$r->{lines}}), $ncpu,
	   'every hart says it is up');

	my @pci = @{$r->{ev}{pci} // []};
	my @edu = grep { $_->{vendor} eq '0x1234' && $_->{device} eq '0x11e8' } @pci;
	is_deeply([sort map { $_->{bdf} } @edu], [sort @$edus], 'edu found where expected');
	for my $e (@edu) {
		my ($b) = grep { $_->{bar} == 0 } @{$e->{bars} // []};
		ok($b && $b->{assigned} && hex($b->{addr}) >= 0x40000000 &&
		   hex($b->{addr}) + hex($b->{size}) <= 0x80000000 &&
		   hex($b->{addr}) % hex($b->{size}) == 0,
		   "$e->{bdf} BAR0 aligned in the 32-bit window");
	}

	my @probe = @{$r->{ev}{'riscv-msi-probe'} // []};
	is(scalar @probe, $ncpu * @$edus, 'one MSI probe per edu and CPU');
	my %hart_of = map { $_->{cpu} => $_->{hart} } @cpus;
	for my $p (@probe) {
		my $what = "$p->{bdf} -> cpu $p->{cpu}";
		ok($p->{ok} && $p->{claims} == 1 && $p->{other_harts} == 0 &&
		   $p->{identity} == $FIRST_ID + $p->{cpu} &&
		   $p->{claimed} == $p->{identity} &&
		   $p->{hart} == $hart_of{$p->{cpu}},
		   "$what: hart $p->{hart} claimed identity $p->{identity} once");
		my $line = grep { /^msi: hart $p->{hart} \(cpu $p->{cpu}\) claimed identity $p->{identity} through stopei/ } @{$r->{lines}};
		ok($line, "$what: claim line");
	}
	my %harts = map { $_->{hart} => 1 } grep { $_->{ok} } @probe;
	ok(keys %harts >= ($ncpu > 1 ? 2 : 1), 'MSIs claimed on ' .
	   ($ncpu > 1 ? 'at least two harts' : 'the hart'));

	# QEMU's log: exactly the messages the probes sent, in order.
	my @want = map { [hex($_->{file}), $_->{identity}] } @probe;
	is_deeply($r->{msi}, \@want,
		  'QEMU saw each MSI written to the chosen file with its identity');

	my $done = ($r->{ev}{done} // [])->[0] // {};
	ok($done->{ok}, 'done line ok');
	ok(!grep({ /EXCEPTION|PANIC/ } @{$r->{lines}}), 'no exception or panic');
}

my @cases = (
	[ '-smp 1, edu behind a root port', 1, ['0000:01:00.0'],
	  ['-device', 'pcie-root-port,id=rp0,chassis=1', '-device', 'edu,bus=rp0'] ],
	[ '-smp 4, edu behind a root port', 4, ['0000:01:00.0'],
	  ['-device', 'pcie-root-port,id=rp0,chassis=1', '-device', 'edu,bus=rp0'] ],
	[ '-smp 5, edu behind a root port', 5, ['0000:01:00.0'],
	  ['-device', 'pcie-root-port,id=rp0,chassis=1', '-device', 'edu,bus=rp0'] ],
	[ '-smp 2, edu on the root bus and two bridges down', 2,
	  ['0000:00:02.0', '0000:02:01.0'],
	  ['-device', 'pcie-root-port,id=rp0,chassis=1,addr=1',
	   '-device', 'pcie-pci-bridge,id=br1,bus=rp0',
	   '-device', 'edu,bus=br1,addr=1', '-device', 'edu,addr=2'] ],
);

for my $c (@cases) {
	my ($name, $smp, $edus, $devices) = @$c;
	subtest $name => sub {
		my $r = boot(smp => $smp, devices => $devices);
		check_boot($r, $smp, $edus);
		diag("$r->{cmd}\n$r->{text}") unless Test::More->builder->is_passing;
	};
}

# OpenSBI v1.1 may let a hart being started run the payload's entry with
# the device tree instead of the address given to hart_start (start.S);
# umsi.riscv_stray starts every secondary hart that way on purpose.
subtest '-smp 4, secondaries entering at _start (umsi.riscv_stray)' => sub {
	my $r = boot(smp => 4, append => 'umsi.riscv_stray',
		     devices => ['-device', 'pcie-root-port,id=rp0,chassis=1',
				 '-device', 'edu,bus=rp0']);
	check_boot($r, 4, ['0000:01:00.0']);
	is(scalar(grep { /^cpu \d+ hart \d+ up \(entered at _start, adopted\)/ }
		  @{$r->{lines}}), 3, 'three harts adopted at _start');
	diag("$r->{cmd}\n$r->{text}") unless Test::More->builder->is_passing;
};

subtest 'virt without the AIA: no IMSIC, FAIL' => sub {
	my $r = boot(machine => 'virt', smp => 2,
		     devices => ['-device', 'edu']);
	is($r->{exit}, 'fail', 'kernel exits with FAIL');
	my ($p) = @{$r->{ev}{'riscv-msi-probe'} // []};
	ok($p && !$p->{ok} && ($p->{reason} // '') =~ /no S-level IMSIC/,
	   'the probe says there is no S-level IMSIC');
	my $ready = ($r->{ev}{ready} // [])->[0] // {};
	is(scalar(grep { $_->{online} } @{$ready->{cpus} // []}), 2,
	   'both harts up all the same');
	diag("$r->{cmd}\n$r->{text}") unless Test::More->builder->is_passing;
};

done_testing();
