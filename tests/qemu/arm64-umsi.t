#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# The arm64 kernel with uMSI (build/arm64/umsi-kernel, make kernel-arm64)
# on QEMU virt with GICv3 and an ITS: the shared glue and drivers over the
# GICv3 ITS back end. With -smp 1, 4 and 6 (cortex-a57) and -smp 4 -cpu
# max, every device behind its own pcie-root-port:
#   - edu: one MSI message, 20 events;
#   - e1000e: 5 MSI-X vectors, spread over the CPUs;
#   - nvme: admin + 15 I/O queues on their own MSI-X vectors (16 of 65:
#     umsi.probe_max=16), verified reads;
#   - nec-usb-xhci (msi=on, msix=off) with a USB keyboard: a 16-message
#     MSI block, command completions on message 0, transfer events on
#     messages 1-15;
#   - the root ports themselves (pcieport, MSI-X).
# Each event must arrive exactly once on the CPU uMSI chose (the kernel's
# fire lines: received = sent, wrong_cpu 0). The ready line names the ITS
# ("its":{"base":...}); each device line's vector its EventID (= index)
# and LPI (= first_lpi + vector, the IRQ's global identity). The held machine is read
# through QEMU's monitor (UmsiCheck): each message's address is
# GITS_TRANSLATER and its data the EventID (the message index); no
# (DeviceID, EventID) twice; no LPI twice. What config space cannot show,
# the ITS's (DeviceID, EventID) -> (LPI, collection) mapping, is read from
# QEMU's trace of the commands the ITS executed: the MAPTI of each
# vector's (DeviceID = BDF, EventID = index), with the collection of any
# MOVI since, must name collection = the line's cpu and LPI = first_lpi +
# vector; a run that migrates under fire moves by MOVI only (no MAPTI of
# an event already mapped); and the trace of
# writes to GITS_TRANSLATER shows each (requester ID, EventID) written at
# least as often as its handler ran.
# Then: pci_nomsi (every function on INTx through a GIC SPI), umsi.offline/online through PSCI
# CPU_OFF/CPU_ON, and umsi.migrate under fire (no event lost).
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
{
	my $r = UmsiQemu::run(arch => 'arm64', smp => 1, timeout => 60);
	plan skip_all => 'arm64 kernel linked without the uMSI library (ITS back end missing)'
		if $r->{serial} =~ /^umsi: library not linked/m;
}

my ($fh, $img) = tempfile('umsi-nvme-XXXXXX', TMPDIR => 1, UNLINK => 1, SUFFIX => '.img');
binmode($fh);
print $fh pack('a4 V x504', 'UMSI', $_) for 0 .. 255;
close($fh);

my $trace_dir = tempdir('umsi-a64t-XXXXXX', TMPDIR => 1, CLEANUP => 1);

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

# -smp 1, 4 and 6 on cortex-a57 (QEMU's default for these tests), and the
# issue's own command line: -cpu max (FEAT_PAuth, BTI, SVE, ... present: the
# kernel must not care), -smp 4.
for my $run ([1, 'cortex-a57'], [4, 'cortex-a57'], [6, 'cortex-a57'], [4, 'max']) {
	my ($smp, $cpu) = @$run;
	subtest "-smp $smp -cpu $cpu: edu, e1000e, nvme, xhci behind root ports" => sub {
		my $trace = "$trace_dir/trace-$smp-$cpu.log";
		my $r = UmsiQemu::run(arch => 'arm64', smp => $smp, cpu => $cpu, timeout => 240,
			hold => 1, devices => [devices(),
				'-trace', 'gicv3_its_cmd_mapti', '-trace', 'gicv3_its_cmd_discard',
				'-trace', 'gicv3_its_cmd_movi',
				'-trace', 'gicv3_its_translation_write', '-D', $trace],
			append => 'umsi.drivers=edu,e1000e,nvme,xhci umsi.probe=all '
				. 'umsi.probe_max=16 umsi.fire=20',
			monitor => sub { UmsiCheck::snapshot(@_) });
		is($r->{exit}, 'held', 'set-up completed and held')
			or diag($r->{serial});
		no_crash($r, "-smp $smp");
		ok((grep { /^gic: \d+ INTID bits; the LPI tables are uMSI's/ } @{$r->{lines}}) &&
		   (grep { /arm64-its: LPI property table at 0x[0-9a-f]+ \(\d+ INTID bits, priority 0xa0\), pending tables for $smp redistributors, EnableLPIs set/ } @{$r->{lines}}),
		   "the LPI property and pending tables are uMSI's ($smp redistributors)");

		my $ready = $r->{ready} // {};
		is($ready->{arch}, 'arm64', 'ready line: arch arm64');
		my @cpus = @{$ready->{cpus} // []};
		is(scalar @cpus, $smp, "ready line: $smp CPUs");
		is(scalar(grep { $_->{online} && defined $_->{mpidr} } @cpus), $smp,
		   'every CPU online, with its MPIDR');
		my %mpidr = map { $_->{cpu} => $_->{mpidr} } @cpus;
		my ($first, $nvec) = ($ready->{first_lpi} // 0, $ready->{nvec} // 0);
		ok($first >= 8192 && $nvec > 0, "ready line: first_lpi $first, nvec $nvec");
		is(ref($ready->{its}) eq 'HASH' && $ready->{its}{base}, '0x8080000',
		   'ready line: "its":{"base":"0x8080000"} (QEMU virt\'s ITS)');
		is($ready->{translater}, '0x8090040', 'ready line: GITS_TRANSLATER = base + 0x10040');

		for my $res (UmsiCheck::check($r->{monitor}, $r)) {
			ok($res->[0], "monitor: $res->[1]") or diag($res->[2]);
		}

		my %want = ('0000:01:00.0' => ['edu', 'msi', 1],
			    '0000:02:00.0' => ['e1000e', 'msix', 5],
			    '0000:03:00.0' => ['nvme', 'msix', 16],
			    '0000:04:00.0' => ['xhci', 'msi', 16]);
		for my $bdf (sort keys %want) {
			my ($drv, $mode, $n) = @{$want{$bdf}};
			my ($d) = grep { $_->{bdf} eq $bdf } @{$r->{devices}};
			ok($d, "$drv at $bdf") or next;
			is($d->{driver}, $drv, "$bdf: driver $drv");
			is($d->{mode}, $mode, "$drv: $mode");
			is($d->{nvec}, $n, "$drv: $n vectors");
			my @bad = grep { !defined $_->{mpidr} || !defined $_->{cpu} ||
					 !defined $_->{vector} ||
					 ($mpidr{$_->{cpu}} // -1) != $_->{mpidr} ||
					 $_->{vector} >= $nvec * @{$ready->{cpus} // []} }
				@{$d->{vectors} // []};
			ok(!@bad, "$drv: each vector names its cpu, that cpu's mpidr, an identity below ncpus * nvec");
			# The ITS's view of each message: alone on its DeviceID
			# (a root port each), EventID = the message number (MSI)
			# or table index (MSI-X); LPI = first_lpi + vector (the
			# global identity, whatever the CPU).
			my @its = grep { ($_->{event_id} // -1) != $_->{index} ||
					 ($_->{lpi} // -1) != $first + $_->{vector} }
				@{$d->{vectors} // []};
			ok(@{$d->{vectors} // []} && !@its,
			   "$drv: each vector's event_id is its $mode index, its lpi first_lpi + vector")
				or diag(join("\n", map { encode_json($_) } @its));
		}
		my ($e) = grep { $_->{bdf} eq '0000:02:00.0' } @{$r->{devices}};
		my %ecpu = map { $_->{cpu} => 1 } @{$e->{vectors} // []};
		my $spread = $smp < 5 ? $smp : 5;
		is(scalar keys %ecpu, $spread, "e1000e: its 5 vectors spread over $spread CPUs");
		my ($x) = grep { $_->{bdf} eq '0000:04:00.0' } @{$r->{devices}};
		my @xv = @{$x->{vectors} // []};
		my %xcpu = map { $_->{cpu} => 1 } @xv;
		ok(@xv == 16 && keys %xcpu == 1 && $xv[0]{vector} % 16 == 0 &&
		   !grep({ $xv[$_]{vector} != $xv[0]{vector} + $_ } 0 .. $#xv),
		   'xhci: one CPU, 16 consecutive identities, aligned');

		my @fire = fires_ok($r, "-smp $smp");
		my %fired = map { $_->{driver} => 1 } @fire;
		is_deeply([sort keys %fired], [qw(e1000e edu nvme xhci)],
			  'every driver fired');
		my ($nv) = grep { ($_->{event} // '') eq 'nvme' } @{$r->{umsi}};
		ok($nv && $nv->{io_queues} == 15 && $nv->{reads} > 0 && !$nv->{bad_reads},
		   'nvme: admin + 15 I/O queues, reads verified');
		my ($xe) = grep { ($_->{event} // '') eq 'xhci' } @{$r->{umsi}};
		ok($xe && $xe->{messages} == 16 && ($xe->{descriptor} // '') eq '0x0112' &&
		   !$xe->{bad_events}, 'xhci: 16 messages, a device descriptor read');

		# The ITS's own view, from QEMU's trace.
		my ($map, $writes) = UmsiCheck::its_trace($trace);
		my (@unmapped, $nmapped);
		for my $d (grep { ($_->{mode} // '') =~ /^msix?$/ } @{$r->{devices}}) {
			my $rid = do { local $UmsiCheck::HW = $r->{monitor};
				       UmsiCheck::requester($d->{bdf}) } // -1;
			for my $v (@{$d->{vectors} // []}) {
				my $m = $map->{"$rid/" . ($v->{event_id} // -1)};
				my $lpi = $first + $v->{vector};
				if (!$m || $m->[0] != $v->{cpu} || $m->[1] != $lpi) {
					push @unmapped, sprintf('%s#%d: MAPTI %s, line says collection %d LPI %d',
						$d->{bdf}, $v->{index},
						$m ? "collection $m->[0] LPI $m->[1]" : 'none',
						$v->{cpu}, $lpi);
				} else {
					$nmapped++;
				}
			}
		}
		ok($nmapped && !@unmapped, "ITS trace: each vector's (DeviceID, EventID) maps to its CPU's collection and LPI ($nmapped)")
			or diag(join("\n", @unmapped));
		my @short;
		for my $f (@fire) {
			my ($d) = grep { $_->{bdf} eq $f->{bdf} } @{$r->{devices}};
			my ($v) = grep { $_->{index} == $f->{index} } @{($d // {})->{vectors} // []};
			my $rid = do { local $UmsiCheck::HW = $r->{monitor};
				       UmsiCheck::requester($f->{bdf}) } // -1;
			my $key = "$rid/" . (($v // {})->{event_id} // -1);
			push @short, "$f->{driver} #$f->{index}: " . ($writes->{$key} // 0) .
				" writes, $f->{received} received"
				if ($writes->{$key} // 0) < $f->{received};
		}
		ok(!@short, 'QEMU saw each (requester ID, EventID) written to GITS_TRANSLATER')
			or diag(join("\n", @short));
		diag($r->{cmd}) unless Test::More->builder->is_passing;
	};
}

sub held {
	my (%o) = @_;
	my @trace = $o{trace} ? ('-trace', 'gicv3_its_cmd_mapti', '-trace', 'gicv3_its_cmd_movi',
				 '-D', $o{trace}) : ();
	my $r = UmsiQemu::run(arch => 'arm64', smp => $o{smp} // 2, timeout => 120,
		hold => 1, append => $o{append},
		devices => ['-device', 'pcie-root-port,id=rp0,chassis=1',
			    '-device', 'pcie-root-port,id=rp1,chassis=2',
			    '-device', 'edu,bus=rp0', '-device', 'e1000e,bus=rp1', @trace],
		monitor => sub { UmsiCheck::snapshot(@_) });
	is($r->{exit}, 'held', "$o{append}: set-up completed and held")
		or diag($r->{serial});
	no_crash($r, $o{append});
	for my $res (UmsiCheck::check($r->{monitor}, $r)) {
		ok($res->[0], "$o{append}: monitor: $res->[1]") or diag($res->[2]);
	}
	return $r;
}

subtest 'pci_nomsi' => sub {
	my $r = held(append => 'pci_nomsi umsi.drivers=edu,e1000e umsi.probe=all');
	my @devs = @{$r->{devices}};
	ok(scalar @devs >= 4, 'root ports, edu and e1000e reported');
	my @msi = grep { ($_->{mode} // '') ne 'intx' ||
			 ($_->{msi_reason} // '') ne 'policy:pci_nomsi' } @devs;
	ok(!@msi, 'every function: INTx through a GIC SPI, msi_reason policy:pci_nomsi')
		or diag(join("\n", map { encode_json($_) } @msi));
};

subtest 'umsi.offline=1,2 umsi.online=2 (-smp 4)' => sub {
	my $trace = "$trace_dir/trace-offline.log";
	my $r = held(smp => 4, trace => $trace, append => 'umsi.drivers=edu,e1000e umsi.probe=all '
		     . 'umsi.fire=10 umsi.offline=1,2 umsi.online=2');
	fires_ok($r, 'before, between and after');
	my (undef, undef, $movi, $again) = UmsiCheck::its_trace($trace);
	ok($movi > 0 && !$again, "IRQs left the offline CPUs by MOVI ($movi), no event mapped twice")
		or diag("MOVI $movi, MAPTI of a mapped event $again");
	my %online = map { $_->{cpu} => $_->{online} } @{$r->{ready}{cpus} // []};
	is_deeply(\%online, { 0 => JSON::PP::true, 1 => JSON::PP::false,
			      2 => JSON::PP::true, 3 => JSON::PP::true },
		  'ready line: cpu 1 offline, the others online');
	my @on1 = grep { $_->{cpu} == 1 } map { @{$_->{vectors} // []} } @{$r->{devices}};
	ok(!@on1, 'no vector left on the offline CPU');
	is(scalar(grep { /^cpu 2 mpidr 0x2 up: redistributor / } @{$r->{lines}}), 2,
	   'cpu 2 came up twice (PSCI CPU_ON after CPU_OFF)');
};

subtest 'umsi.migrate=300 (-smp 4)' => sub {
	my $trace = "$trace_dir/trace-migrate.log";
	my $r = held(smp => 4, trace => $trace, append => 'umsi.drivers=edu,e1000e umsi.migrate=300');
	my @m = grep { ($_->{event} // '') eq 'migrate' } @{$r->{umsi}};
	is(scalar @m, 2, 'edu and e1000e migrated');
	my @bad = grep { !$_->{ok} || $_->{lost} || $_->{moved} != 300 } @m;
	ok(!@bad, '300 moves each under fire, every event received, none lost')
		or diag(join("\n", map { encode_json($_) } @bad));
	my (undef, undef, $movi, $again) = UmsiCheck::its_trace($trace);
	ok($movi >= 600 && !$again, "every move a MOVI ($movi), no event mapped twice (LPIs kept)")
		or diag("MOVI $movi, MAPTI of a mapped event $again");
};

# Past GICv2's 8 CPUs: QEMU virt with GICv3 numbers 16 CPUs a cluster
# (MPIDR Aff1 = n / 16, Aff0 = n % 16), each with a redistributor of its
# own. 64 CPUs: every one up and online with the MPIDR QEMU gave it; the
# devices spread over CPUs of several clusters; CPUs of two clusters go
# offline under fire and their IRQs leave by MOVI; the monitor agrees.
subtest '-smp 64: every CPU up, spreading and CPU offline across clusters' => sub {
	my $trace = "$trace_dir/trace-64.log";
	my $r = UmsiQemu::run(arch => 'arm64', smp => 64, timeout => 240,
		hold => 1, append => 'umsi.drivers=edu,e1000e,nvme umsi.probe=all '
			. 'umsi.probe_max=16 umsi.fire=10 umsi.offline=17,20,63 umsi.online=20',
		devices => ['-device', 'pcie-root-port,id=rp0,chassis=1',
			    '-device', 'pcie-root-port,id=rp1,chassis=2',
			    '-device', 'pcie-root-port,id=rp2,chassis=3',
			    '-device', 'edu,bus=rp0', '-device', 'e1000e,bus=rp1',
			    '-drive', "if=none,id=d0,file=$img,format=raw",
			    '-device', 'nvme,serial=umsi,drive=d0,bus=rp2',
			    '-trace', 'gicv3_its_cmd_mapti', '-trace', 'gicv3_its_cmd_movi',
			    '-D', $trace],
		monitor => sub { UmsiCheck::snapshot(@_) });
	is($r->{exit}, 'held', 'set-up completed and held') or diag($r->{serial});
	no_crash($r, '-smp 64');
	my @up = grep { /^cpu \d+ mpidr 0x[0-9a-f]+ up: redistributor / } @{$r->{lines}};
	my %upcpu = map { /^cpu (\d+) / ? ($1 => 1) : () } @up;
	is(scalar keys %upcpu, 64, 'all 64 CPUs came up, each with its redistributor');
	my @cpus = @{$r->{ready}{cpus} // []};
	is(scalar @cpus, 64, 'ready line: 64 CPUs');
	my @badid = grep { $_->{mpidr} != (int($_->{cpu} / 16) << 8 | $_->{cpu} % 16) } @cpus;
	ok(!@badid, 'each CPU has the MPIDR QEMU gives it (16 a cluster)')
		or diag(join("\n", map { encode_json($_) } @badid));
	my %off = map { $_->{cpu} => 1 } grep { !$_->{online} } @cpus;
	is_deeply([sort { $a <=> $b } keys %off], [17, 63],
		  'cpus 17 and 63 offline, 20 back online, the other 61 online');
	for my $res (UmsiCheck::check($r->{monitor}, $r)) {
		ok($res->[0], "monitor: $res->[1]") or diag($res->[2]);
	}
	fires_ok($r, '-smp 64, before, between and after the offlines');
	my @vec = map { @{$_->{vectors} // []} } grep { ($_->{mode} // '') =~ /^msix?$/ } @{$r->{devices}};
	my %used = map { $_->{cpu} => 1 } @vec;
	ok(!grep({ $off{$_->{cpu}} } @vec), 'no vector on an offline CPU');
	ok((grep { $_ >= 16 } keys %used) && scalar(keys %used) >= 16,
	   'vectors spread over ' . scalar(keys %used) . ' CPUs, past the first cluster');
	my ($n) = grep { $_->{bdf} eq '0000:03:00.0' } @{$r->{devices}};
	my %ncpu = map { $_->{cpu} => 1 } @{($n // {})->{vectors} // []};
	is(scalar keys %ncpu, 16, 'nvme: 16 vectors on 16 CPUs');
	my (undef, undef, $movi, $again) = UmsiCheck::its_trace($trace);
	ok($movi > 0 && !$again, "IRQs left the offline CPUs by MOVI ($movi), no event mapped twice")
		or diag("MOVI $movi, MAPTI of a mapped event $again");
	diag($r->{cmd}) unless Test::More->builder->is_passing;
};

# INTx through the GIC's SPIs (the host bridge's interrupt-map: INTA-D of
# the root bus's slots on SPIs 35-38, level-high): edu and e1000e denied
# MSI (device_nomsi) behind root ports, each on a line of its own, and on
# the root bus in slots 1 and 5, sharing one SPI (one IRQ, two handlers).
# uMSI gives each line a CPU and an identity; the kernel aims the SPI
# there (GICD_IROUTER: its affinity) and hands the identity to umsi_dispatch().
# Every event arrives once on the chosen CPU, 100 moves under fire each
# (a move rewrites the route), and the monitor's reading of GICD_IROUTER, the enable and configuration bits agrees.
for my $case (['behind root ports', ['-device', 'pcie-root-port,id=rp0,chassis=1',
				     '-device', 'pcie-root-port,id=rp1,chassis=2',
				     '-device', 'edu,bus=rp0', '-device', 'e1000e,bus=rp1'], 0],
	      ['sharing one SPI on the root bus', ['-device', 'edu,addr=1',
						   '-device', 'e1000e,addr=5'], 1]) {
	my ($what, $devs, $shared) = @$case;
	subtest "INTx through GIC SPIs: edu and e1000e $what" => sub {
		my $trace = "$trace_dir/trace-intx-$shared.log";
		my $r = UmsiQemu::run(arch => 'arm64', smp => 4, timeout => 240, hold => 1,
			devices => [@$devs],
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
		diag($r->{cmd}) unless Test::More->builder->is_passing;
	};
}

done_testing();
