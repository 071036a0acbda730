#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# The riscv64 kernel with uMSI (build/riscv64/umsi-kernel, make
# kernel-riscv64) on QEMU virt with the AIA (aplic-imsic): the shared glue
# and drivers over the IMSIC back end. With -smp 1, 4 and 5, every device
# behind its own pcie-root-port:
#   - edu: one MSI message, 20 events;
#   - e1000e: 5 MSI-X vectors, spread over the harts;
#   - nvme: admin + 15 I/O queues on their own MSI-X vectors (16 of 65:
#     umsi.probe_max=16), verified reads;
#   - nec-usb-xhci (msi=on, msix=off) with a USB keyboard: a 16-message
#     MSI block (umsi.probe_max=16), command completions on message 0,
#     transfer events on messages 1-15;
#   - the root ports themselves (pcieport, MSI-X).
# Each event must arrive exactly once on the hart uMSI chose (the kernel's
# fire lines: received = sent, wrong_cpu 0); the held machine is then read
# through QEMU's monitor (UmsiCheck): every MSI/MSI-X message's address is
# the S-level interrupt file of the hart the device line names and its
# data the identity, no (hart, identity) twice, BARs as reported. QEMU's
# trace of writes into the IMSIC ('riscv.imsic') backs the kernel's
# counts: each (file, identity) a vector uses was written at least as
# often as its handler ran.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempfile tempdir);
use UmsiQemu;
use UmsiCheck;

plan skip_all => "$UmsiQemu::RV_QEMU not installed"
	unless UmsiQemu::have_qemu('riscv64');
plan skip_all => "$UmsiQemu::RV_KERNEL not built (make kernel-riscv64)"
	unless -f $UmsiQemu::RV_KERNEL;
{
	my $r = UmsiQemu::run(arch => 'riscv64', smp => 1, timeout => 60);
	plan skip_all => 'riscv64 kernel linked without the uMSI library (IMSIC back end missing)'
		if $r->{serial} =~ /^umsi: library not linked/m;
}

my ($fh, $img) = tempfile('umsi-nvme-XXXXXX', TMPDIR => 1, UNLINK => 1, SUFFIX => '.img');
binmode($fh);
print $fh pack('a4 V x504', 'UMSI', $_) for 0 .. 255;
close($fh);

my $trace_dir = tempdir('umsi-rv64t-XXXXXX', TMPDIR => 1, CLEANUP => 1);

sub devices {
	return ('-device', 'pcie-root-port,id=rp0,chassis=1',
		'-device', 'pcie-root-port,id=rp1,chassis=2',
		'-device', 'pcie-root-port,id=rp2,chassis=3',
		'-device', 'pcie-root-port,id=rp3,chassis=4',
		'-device', 'edu,bus=rp0',
		'-device', 'e1000e,bus=rp1',
		'-drive', "if=none,id=d0,file=$img,format=raw",
		'-device', 'nvme,serial=umsi,drive=d0,bus=rp2',
		'-device', 'nec-usb-xhci,id=xhci,msi=on,msix=off,bus=rp3',
		'-device', 'usb-kbd,bus=xhci.0');
}

# (file address, identity) => writes QEMU saw reach the IMSIC.
sub imsic_writes {
	my ($file) = @_;
	my %n;
	open(my $t, '<', $file) or return \%n;
	while (<$t>) {
		next unless /memory_region_ops_write .*addr (0x[0-9a-f]+) value (0x[0-9a-f]+) size 4 name 'riscv.imsic'/;
		$n{hex($1) . '/' . hex($2)}++;
	}
	close($t);
	return \%n;
}

for my $smp (1, 4, 5) {
	subtest "-smp $smp: edu, e1000e, nvme, xhci behind root ports" => sub {
		my $trace = "$trace_dir/trace-$smp.log";
		my $r = UmsiQemu::run(arch => 'riscv64', smp => $smp, timeout => 240,
			hold => 1, devices => [devices(),
				'-trace', 'memory_region_ops_write', '-D', $trace],
			append => 'umsi.drivers=edu,e1000e,nvme,xhci umsi.probe=all '
				. 'umsi.probe_max=16 umsi.fire=20',
			monitor => sub { UmsiCheck::snapshot(@_) });
		is($r->{exit}, 'held', 'set-up completed and held')
			or diag($r->{serial});
		ok(!grep({ /EXCEPTION|PANIC|^check: |"event":"error"/ } @{$r->{lines}}),
		   'no crash, no kernel check failure')
			or diag(join("\n", grep { /EXCEPTION|PANIC|^check: |"event":"error"/ } @{$r->{lines}}));

		my $ready = $r->{ready} // {};
		is($ready->{arch}, 'riscv64', 'ready line: arch riscv64');
		my @cpus = @{$ready->{cpus} // []};
		is(scalar @cpus, $smp, "ready line: $smp CPUs");
		is(scalar(grep { $_->{online} && defined $_->{hart} } @cpus), $smp,
		   'every CPU online, with its hart');
		my %hart = map { $_->{cpu} => $_->{hart} } @cpus;
		my %file = map { $_->{hart} => hex($_->{file}) } @cpus;

		for my $res (UmsiCheck::check($r->{monitor}, $r)) {
			ok($res->[0], "monitor: $res->[1]") or diag($res->[2]);
		}

		my %want = ('0000:01:00.0' => ['edu', 'msi', 1],
			    '0000:02:00.0' => ['e1000e', 'msix', 5],
			    # umsi.probe_max=16 (for xhci's block) lets nvme
			    # have 16 of its 65 instead of one per CPU plus admin.
			    '0000:03:00.0' => ['nvme', 'msix', 16],
			    '0000:04:00.0' => ['xhci', 'msi', 16]);
		for my $bdf (sort keys %want) {
			my ($drv, $mode, $n) = @{$want{$bdf}};
			my ($d) = grep { $_->{bdf} eq $bdf } @{$r->{devices}};
			ok($d, "$drv at $bdf") or next;
			is($d->{driver}, $drv, "$bdf: driver $drv");
			is($d->{mode}, $mode, "$drv: $mode");
			is($d->{nvec}, $n, "$drv: $n vectors");
			my @bad = grep { !defined $_->{hart} || !defined $_->{cpu} ||
					 !defined $_->{vector} ||
					 ($hart{$_->{cpu}} // -1) != $_->{hart} ||
					 $_->{vector} < 1 || $_->{vector} > 255 }
				@{$d->{vectors} // []};
			ok(!@bad, "$drv: each vector names its cpu, that cpu's hart, an identity 1-255");
		}
		my ($e) = grep { $_->{bdf} eq '0000:02:00.0' } @{$r->{devices}};
		my %ehart = map { $_->{hart} => 1 } @{$e->{vectors} // []};
		is(scalar keys %ehart, $smp < 5 ? $smp : 5,
		   'e1000e: its vectors spread over the harts');
		my ($x) = grep { $_->{bdf} eq '0000:04:00.0' } @{$r->{devices}};
		my @xv = @{$x->{vectors} // []};
		my %xhart = map { $_->{hart} => 1 } @xv;
		ok(@xv == 16 && keys %xhart == 1 && $xv[0]{vector} % 16 == 0 &&
		   !grep({ $xv[$_]{vector} != $xv[0]{vector} + $_ } 0 .. $#xv),
		   'xhci: one hart, 16 consecutive identities, aligned');

		my @fire = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
		my %fired = map { $_->{driver} => 1 } @fire;
		is_deeply([sort keys %fired], [qw(e1000e edu nvme xhci)],
			  'every driver fired');
		my @badfire = grep { !$_->{ok} || $_->{received} != $_->{sent} ||
				     $_->{wrong_cpu} } @fire;
		ok(!@badfire, 'every event arrived once, on the hart uMSI chose')
			or diag(join("\n", map { JSON::PP::encode_json($_) } @badfire));
		my ($nv) = grep { ($_->{event} // '') eq 'nvme' } @{$r->{umsi}};
		ok($nv && $nv->{io_queues} == 15 && $nv->{reads} > 0 && !$nv->{bad_reads},
		   'nvme: admin + 15 I/O queues, reads verified');
		my ($xe) = grep { ($_->{event} // '') eq 'xhci' } @{$r->{umsi}};
		ok($xe && $xe->{messages} == 16 && ($xe->{descriptor} // '') eq '0x0112' &&
		   !$xe->{bad_events}, 'xhci: 16 messages, a device descriptor read');

		# QEMU's own view: writes into each vector's (file, identity).
		my $w = imsic_writes($trace);
		my @short;
		for my $f (@fire) {
			my $key = ($file{$hart{$f->{cpu}} // -1} // -1) . '/' . $f->{vector};
			push @short, "$f->{driver} #$f->{index} $key: " . ($w->{$key} // 0) .
				" writes, $f->{received} received"
				if ($w->{$key} // 0) < $f->{received};
		}
		ok(!@short, 'QEMU saw the messages reach the chosen hart\'s file with the identity')
			or diag(join("\n", @short));
		diag($r->{cmd}) unless Test::More->builder->is_passing;
	};
}

# INTx through the S-level APLIC in MSI mode (aplic.c): edu and e1000e
# denied MSI (device_nomsi) use their INTA, which the host bridge's
# interrupt-map sends to APLIC sources 32-35; the APLIC forwards each as
# an MSI to the hart's IMSIC file with the identity uMSI chose. Behind
# root ports each has a line of its own; on the root bus in slots 1 and 5
# they share source 33 (one IRQ, two handlers). Every event arrives once
# on the chosen hart, 100 moves under fire each (a move rewrites the
# source's target register), and the monitor reads each source's
# sourcecfg (level), target (hart index, EIID) and enable bit back.
for my $case (['behind root ports', ['-device', 'pcie-root-port,id=rp0,chassis=1',
				     '-device', 'pcie-root-port,id=rp1,chassis=2',
				     '-device', 'edu,bus=rp0', '-device', 'e1000e,bus=rp1'], 0],
	      ['sharing one line on the root bus', ['-device', 'edu,addr=1',
						    '-device', 'e1000e,addr=5'], 1]) {
	my ($what, $devs, $shared) = @$case;
	subtest "INTx through the APLIC in MSI mode: edu and e1000e $what" => sub {
		my $r = UmsiQemu::run(arch => 'riscv64', smp => 4, timeout => 240, hold => 1,
			devices => $devs,
			append => 'umsi.drivers=edu,e1000e umsi.probe=all umsi.fire=20 '
				. 'device_nomsi=0x11e81234,0x10d38086 umsi.migrate=100',
			monitor => sub { UmsiCheck::snapshot(@_) });
		is($r->{exit}, 'held', 'set-up completed and held') or diag($r->{serial});
		ok((grep { /^aplic: S-level domain 0xd000000, 96 sources, MSI delivery mode/ } @{$r->{lines}}),
		   'the kernel put the S-level APLIC in MSI mode');
		ok(!grep({ /EXCEPTION|PANIC|^check: |"event":"error"|nobody cared/ } @{$r->{lines}}),
		   'no crash, no check failure, no storm');
		my @intx = grep { ($_->{mode} // '') eq 'intx' } @{$r->{devices}};
		is(scalar @intx, 2, 'edu and e1000e in INTx mode');
		my %gsi = map { $_->{vectors}[0]{gsi} => 1 } grep { @{$_->{vectors} // []} } @intx;
		is(scalar keys %gsi, $shared ? 1 : 2,
		   $shared ? 'one APLIC source shared' : 'an APLIC source each');
		my @fire = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
		my @bad = grep { !$_->{ok} || $_->{received} != $_->{sent} || $_->{wrong_cpu} } @fire;
		ok(@fire == 2 && !@bad, 'every event arrived once, on the hart uMSI chose')
			or diag(join("\n", map { JSON::PP::encode_json($_) } @fire));
		my @m = grep { ($_->{event} // '') eq 'migrate' } @{$r->{umsi}};
		my @mbad = grep { !$_->{ok} || $_->{lost} || $_->{moved} != 100 } @m;
		ok(@m == 2 && !@mbad, '100 moves each under fire, none lost')
			or diag(join("\n", map { JSON::PP::encode_json($_) } @m));
		for my $res (UmsiCheck::check($r->{monitor}, $r)) {
			ok($res->[0], "monitor: $res->[1]") or diag($res->[2]);
		}
		diag($r->{cmd}) unless Test::More->builder->is_passing;
	};
}

done_testing();
