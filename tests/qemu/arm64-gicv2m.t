#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# The arm64 kernel with uMSI on QEMU virt with a GICv2 and its v2m MSI
# frame (-machine virt,gic-version=2): the GICv2m back end
# (src/arch/arm64/gicv2m.c) under the same glue and drivers as on the
# GICv3 ITS. Every device behind its own pcie-root-port:
#   - edu: one MSI message; e1000e: 5 MSI-X vectors; nvme: admin + 15 I/O
#     queues (umsi.probe_max=16), reads verified; nec-usb-xhci (msi=on,
#     msix=off) with a USB keyboard: a 16-message MSI block (the most the
#     frame's first SPI, 80, is aligned for); the root ports' MSI-X.
# Each event must arrive exactly once on the CPU uMSI chose. The ready line
# says "ctl":"gicv2m" and names the frame (base, MSI_SETSPI_NS, its SPIs
# 80-143); each vector its "spi" (= first SPI + the identity). The held
# machine is read through QEMU's monitor (UmsiCheck): every message is
# (MSI_SETSPI_NS, the line's SPI) and no SPI is used twice. What config
# space cannot show, the distributor's routing, comes from QEMU's trace of
# the guest's distributor writes and the CPUs' acknowledgements (the
# monitor cannot read QEMU's GICv2, which asks which CPU is reading):
# GICD_ITARGETSR, GICD_ISENABLER and GICD_ICFGR say each SPI goes to the
# line's CPU only, enabled, edge-triggered, and every fired SPI was
# acknowledged by that CPU as often as its handler ran. Then 300 moves under fire each for
# edu and e1000e (a move rewrites the SPI's target byte; the device's
# message stays) and CPUs going offline and online, the monitor agreeing
# after both.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempfile tempdir);
use JSON::PP;
use UmsiQemu;
use UmsiCheck;

plan skip_all => "$UmsiQemu::ARM64_QEMU not installed"
	unless UmsiQemu::have_qemu('arm64');
plan skip_all => "$UmsiQemu::ARM64_KERNEL not built (make kernel-arm64)"
	unless -f $UmsiQemu::ARM64_KERNEL;

my ($fh, $img) = tempfile('umsi-nvme-XXXXXX', TMPDIR => 1, UNLINK => 1, SUFFIX => '.img');
binmode($fh);
print $fh pack('a4 V x504', 'UMSI', $_) for 0 .. 255;
close($fh);

my $MACHINE = 'virt,gic-version=2';
my $trace_dir = tempdir('umsi-v2m-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my @TRACE = ('-trace', 'gic_dist_write', '-trace', 'gic_acknowledge_irq');

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

sub no_crash {
	my ($r, $what) = @_;
	ok(!grep({ /EXCEPTION|PANIC|^check: |"event":"error"/ } @{$r->{lines}}),
	   "$what: no crash, no kernel check failure")
		or diag(join("\n", grep { /EXCEPTION|PANIC|^check: |"event":"error"/ } @{$r->{lines}}));
}

sub fires_ok {
	my ($r, $what) = @_;
	my @fire = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
	my @bad = grep { !$_->{ok} || $_->{received} != $_->{sent} || $_->{wrong_cpu} } @fire;
	ok(@fire && !@bad, "$what: every event arrived once, on the CPU uMSI chose")
		or diag(join("\n", map { encode_json($_) } @bad));
	return @fire;
}

sub monitor_ok {
	my ($r, $what) = @_;
	for my $res (UmsiCheck::check($r->{monitor}, $r)) {
		ok($res->[0], "$what: monitor: $res->[1]") or diag($res->[2]);
	}
}

subtest '-smp 4: edu, e1000e, nvme, xhci behind root ports' => sub {
	my $trace = "$trace_dir/trace-4.log";
	my $r = UmsiQemu::run(arch => 'arm64', machine => $MACHINE, smp => 4,
		timeout => 240, hold => 1, devices => [devices(), @TRACE, '-D', $trace],
		append => 'umsi.drivers=edu,e1000e,nvme,xhci umsi.probe=all '
			. 'umsi.probe_max=16 umsi.fire=20',
		monitor => sub { UmsiCheck::snapshot(@_) });
	is($r->{exit}, 'held', 'set-up completed and held') or diag($r->{serial});
	no_crash($r, 'gicv2m');
	ok((grep { /^gic: GICv2 distributor 0x8000000 .* v2m frame 0x8020000 SPIs 80-143$/ } @{$r->{lines}}) &&
	   (grep { /^umsi info: arm64-gicv2m: frame 0x8020000: SPIs 80-143$/ } @{$r->{lines}}),
	   'the kernel and the back end read the frame: SPIs 80-143');
	my $ready = $r->{ready} // {};
	is($ready->{ctl}, 'gicv2m', 'ready line: "ctl":"gicv2m"');
	is_deeply($ready->{v2m}, { base => '0x8020000', setspi => '0x8020040',
				   first_spi => 80, spis => 64 },
		  'ready line: the v2m frame, MSI_SETSPI_NS and its SPIs');
	is(scalar(grep { $_->{online} } @{$ready->{cpus} // []}), 4, 'four CPUs online');
	monitor_ok($r, 'gicv2m');
	my %want = ('0000:01:00.0' => ['edu', 'msi', 1],
		    '0000:02:00.0' => ['e1000e', 'msix', 5],
		    '0000:03:00.0' => ['nvme', 'msix', 16],
		    '0000:04:00.0' => ['xhci', 'msi', 16]);
	for my $bdf (sort keys %want) {
		my ($drv, $mode, $n) = @{$want{$bdf}};
		my ($d) = grep { $_->{bdf} eq $bdf } @{$r->{devices}};
		ok($d, "$drv at $bdf") or next;
		is($d->{mode}, $mode, "$drv: $mode");
		is($d->{nvec}, $n, "$drv: $n vectors");
		my @bad = grep { ($_->{spi} // -1) != 80 + $_->{vector} } @{$d->{vectors} // []};
		ok(@{$d->{vectors} // []} && !@bad, "$drv: each vector's spi is 80 + its identity")
			or diag(join("\n", map { encode_json($_) } @bad));
	}
	my ($e) = grep { $_->{bdf} eq '0000:02:00.0' } @{$r->{devices}};
	my %ecpu = map { $_->{cpu} => 1 } @{$e->{vectors} // []};
	is(scalar keys %ecpu, 4, 'e1000e: its 5 vectors spread over the 4 CPUs');
	my ($x) = grep { $_->{bdf} eq '0000:04:00.0' } @{$r->{devices}};
	my @xv = @{$x->{vectors} // []};
	my %xcpu = map { $_->{cpu} => 1 } @xv;
	ok(@xv == 16 && keys %xcpu == 1 && $xv[0]{spi} % 16 == 0 &&
	   !grep({ $xv[$_]{spi} != $xv[0]{spi} + $_ } 0 .. $#xv),
	   'xhci: one CPU, 16 consecutive SPIs, aligned to 16');
	my @fire = fires_ok($r, 'gicv2m');
	for my $res (UmsiCheck::gicv2_check(UmsiCheck::gicv2_trace($trace), $r, \@fire)) {
		ok($res->[0], $res->[1]) or diag($res->[2]);
	}
	my %fired = map { $_->{driver} => 1 } @fire;
	is_deeply([sort keys %fired], [qw(e1000e edu nvme xhci)], 'every driver fired');
	my ($nv) = grep { ($_->{event} // '') eq 'nvme' } @{$r->{umsi}};
	ok($nv && $nv->{io_queues} == 15 && $nv->{reads} > 0 && !$nv->{bad_reads},
	   'nvme: admin + 15 I/O queues, reads verified');
	my ($xe) = grep { ($_->{event} // '') eq 'xhci' } @{$r->{umsi}};
	ok($xe && $xe->{messages} == 16 && !$xe->{bad_events},
	   'xhci: 16 messages, no bad event');
	diag($r->{cmd}) unless Test::More->builder->is_passing;
};

subtest 'umsi.migrate=300 under fire, then umsi.offline=1,2 umsi.online=2' => sub {
	my $trace = "$trace_dir/trace-moves.log";
	my $r = UmsiQemu::run(arch => 'arm64', machine => $MACHINE, smp => 4,
		timeout => 240, hold => 1,
		devices => ['-device', 'pcie-root-port,id=rp0,chassis=1',
			    '-device', 'pcie-root-port,id=rp1,chassis=2',
			    '-device', 'edu,bus=rp0', '-device', 'e1000e,bus=rp1',
			    @TRACE, '-D', $trace],
		append => 'umsi.drivers=edu,e1000e umsi.probe=all umsi.fire=10 '
			. 'umsi.migrate=300 umsi.offline=1,2 umsi.online=2',
		monitor => sub { UmsiCheck::snapshot(@_) });
	is($r->{exit}, 'held', 'set-up completed and held') or diag($r->{serial});
	no_crash($r, 'moves');
	my @m = grep { ($_->{event} // '') eq 'migrate' } @{$r->{umsi}};
	is(scalar @m, 2, 'edu and e1000e migrated');
	my @bad = grep { !$_->{ok} || $_->{lost} || $_->{moved} != 300 } @m;
	ok(!@bad, '300 moves each under fire, every event received, none lost')
		or diag(join("\n", map { encode_json($_) } @bad));
	fires_ok($r, 'before, between and after the offlines');
	my %online = map { $_->{cpu} => $_->{online} } @{$r->{ready}{cpus} // []};
	is_deeply(\%online, { 0 => JSON::PP::true, 1 => JSON::PP::false,
			      2 => JSON::PP::true, 3 => JSON::PP::true },
		  'ready line: cpu 1 offline, the others online');
	my @on1 = grep { $_->{cpu} == 1 } map { @{$_->{vectors} // []} } @{$r->{devices}};
	ok(!@on1, 'no vector left on the offline CPU');
	monitor_ok($r, 'after the moves');
	# Where each SPI points last is where the line says it is; a move
	# wrote only target bytes (the messages are checked above).
	my $g = UmsiCheck::gicv2_trace($trace);
	for my $res (UmsiCheck::gicv2_check($g, $r)) {
		ok($res->[0], "after the moves: $res->[1]") or diag($res->[2]);
	}
	my ($edu) = grep { $_->{bdf} eq '0000:01:00.0' } @{$r->{devices}};
	my $spi = (($edu // {})->{vectors} // [{}])->[0]{spi} // -1;
	my %by = %{$g->{acks}{$spi} // {}};
	ok(scalar(keys %by) >= 3, 'edu\'s SPI was acknowledged on ' . scalar(keys %by) .
	   ' CPUs as it moved');
	diag($r->{cmd}) unless Test::More->builder->is_passing;
};

# INTx through the GIC's SPIs (the host bridge's interrupt-map: INTA-D of
# the root bus's slots on SPIs 35-38, level-high): edu and e1000e denied
# MSI (device_nomsi) behind root ports, each on a line of its own, and on
# the root bus in slots 1 and 5, sharing one SPI (one IRQ, two handlers).
# uMSI gives each line a CPU and an identity; the kernel aims the SPI
# there (GICD_ITARGETSR: its interface) and hands the identity to umsi_dispatch().
# Every event arrives once on the chosen CPU, 100 moves under fire each
# (a move rewrites the route), and QEMU's trace of the distributor writes agrees.
for my $case (['behind root ports', ['-device', 'pcie-root-port,id=rp0,chassis=1',
				     '-device', 'pcie-root-port,id=rp1,chassis=2',
				     '-device', 'edu,bus=rp0', '-device', 'e1000e,bus=rp1'], 0],
	      ['sharing one SPI on the root bus', ['-device', 'edu,addr=1',
						   '-device', 'e1000e,addr=5'], 1]) {
	my ($what, $devs, $shared) = @$case;
	subtest "INTx through GIC SPIs (GICv2): edu and e1000e $what" => sub {
		my $trace = "$trace_dir/trace-intx-$shared.log";
		my $r = UmsiQemu::run(arch => 'arm64', smp => 4, timeout => 240, hold => 1,
			machine => $MACHINE,
			devices => [@$devs, @TRACE, '-D', $trace],
			append => 'umsi.drivers=edu,e1000e umsi.probe=all umsi.fire=20 '
				. 'device_nomsi=0x11e81234,0x10d38086 umsi.migrate=100',
			monitor => sub { UmsiCheck::snapshot(@_) });
		is($r->{exit}, 'held', 'set-up completed and held') or diag($r->{serial});
		ok((grep { /^dt: pci interrupt-map: 16 INTx entries to GIC SPIs \(INTA of slot 0: INTID 35\)$/ } @{$r->{lines}}),
		   'the kernel read the interrupt-map: INTx on SPIs');
		ok(!grep({ /EXCEPTION|PANIC|^check: |"event":"error"|nobody cared/ } @{$r->{lines}}),
		   'no crash, no check failure, no storm');
		my @intx = grep { ($_->{mode} // '') eq 'intx' } @{$r->{devices}};
		is(scalar @intx, 2, 'edu and e1000e in INTx mode');
		my %gsi = map { $_->{vectors}[0]{gsi} => 1 } grep { @{$_->{vectors} // []} } @intx;
		is(scalar keys %gsi, $shared ? 1 : 2, $shared ? 'one SPI shared' : 'an SPI each');
		my @fire = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
		my @bad = grep { !$_->{ok} || $_->{received} != $_->{sent} || $_->{wrong_cpu} } @fire;
		ok(@fire == 2 && !@bad, 'every event arrived once, on the CPU uMSI chose')
			or diag(join("\n", map { encode_json($_) } @fire));
		my @m = grep { ($_->{event} // '') eq 'migrate' } @{$r->{umsi}};
		my @mbad = grep { !$_->{ok} || $_->{lost} || $_->{moved} != 100 } @m;
		ok(@m == 2 && !@mbad, '100 moves each under fire, none lost')
			or diag(join("\n", map { encode_json($_) } @m));
		for my $res (UmsiCheck::check($r->{monitor}, $r)) {
			ok($res->[0], "monitor: $res->[1]") or diag($res->[2]);
		}
		for my $res (UmsiCheck::gicv2_check(UmsiCheck::gicv2_trace($trace), $r)) {
			ok($res->[0], $res->[1]) or diag($res->[2]);
		}
		diag($r->{cmd}) unless Test::More->builder->is_passing;
	};
}

done_testing();
