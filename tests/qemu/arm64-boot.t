#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# The arm64 reference kernel (kernel/arch/arm64, make kernel-arm64) on
# QEMU's virt machine with GICv3 and an ITS: it reads the device tree QEMU
# passes in x0, brings every CPU up through PSCI CPU_ON with its
# redistributor and CPU interface, and says so in a UMSI ready line. With
# edu devices (on the root bus, behind a pcie-root-port) it enumerates PCI
# and proves MSI through the ITS without the uMSI library: edu's MSI
# address is GITS_TRANSLATER, its DeviceID the requester ID (msi-map),
# the LPI must be acknowledged by the CPU whose collection MAPTI chose,
# and after MOVI by the new CPU. With umsi.hold the kernel stays up and
# QEMU's monitor must agree: bridge bus numbers, BARs, and edu's MSI
# capability holding GITS_TRANSLATER and the EventID.
#
# The raw probe runs with umsi.msiprobe, the library is left out with
# umsi.nolib (tests/qemu/arm64-umsi.t runs it). Every run is under timeout(1); the kernel ends with PSCI SYSTEM_OFF
# (QEMU exits 0).
use strict;
use warnings;
use Test::More;
use POSIX ();
use File::Temp qw(tempdir);
use JSON::PP;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use IO::Socket::UNIX;
use Time::HiRes qw(sleep time);

my $ROOT = abs_path(dirname(__FILE__) . '/../..');
my $BUILD = $ENV{BUILD} // "$ROOT/build";
$BUILD = "$ROOT/$BUILD" unless $BUILD =~ m{^/};
my $KERNEL = $ENV{UMSI_ARM64_KERNEL} // "$BUILD/arm64/umsi-kernel";
my $QEMU = $ENV{QEMU_AARCH64} // 'qemu-system-aarch64';

plan skip_all => "$QEMU not installed"
	unless system("command -v $QEMU >/dev/null 2>&1") == 0;
plan skip_all => "$KERNEL not built (make kernel-arm64)" unless -f $KERNEL;

sub boot {
	my (%o) = @_;
	my $dir = tempdir('umsi-arm64-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my @cmd = ('timeout', '-k', '5', $o{timeout} // 60, $QEMU,
		   '-machine', 'virt,gic-version=3,its=on' . ($o{machine} // ''),
		   '-cpu', 'cortex-a57', '-m', '256', '-smp', $o{smp}, '-nic', 'none',
		   '-display', 'none', '-monitor', 'none', '-no-reboot',
		   '-serial', "file:$dir/serial.log",
		   '-kernel', $KERNEL, '-append', $o{append} // '',
		   @{$o{devices} // []});
	my $out = `@{[join(' ', map { quotemeta } @cmd)]} 2>&1`;
	my $rc = $? >> 8;
	open(my $fh, '<', "$dir/serial.log") or die "serial.log: $!";
	my $text = do { local $/; <$fh> } // '';
	close($fh);
	$text =~ s/\r//g;
	my @lines = split(/\n/, $text);
	my @umsi;
	for (@lines) {
		next unless /^UMSI (\{.*\})\s*$/;
		push @umsi, eval { decode_json($1) } // { event => 'unparsable', text => $1 };
	}
	my ($ready) = grep { $_->{event} eq 'ready' } @umsi;
	my ($done) = grep { $_->{event} eq 'done' } @umsi;
	return { rc => $rc, qemu => $out, serial => $text, lines => \@lines,
		 ready => $ready, done => $done,
		 probes => [grep { $_->{event} eq 'arm64-msi-probe' } @umsi],
		 cmd => join(' ', @cmd) };
}

# The boot every case shares: CPUs, redistributors, the ready line.
sub check_boot {
	my ($r, $ncpu, $append) = @_;
	is($r->{rc}, 0, 'QEMU exits 0 (PSCI SYSTEM_OFF), no time-out');
	ok(!grep({ /EXCEPTION|PANIC/ } @{$r->{lines}}), 'no exception or panic');
	ok(grep({ $_ eq "dt: bootargs \"$append\"" } @{$r->{lines}}),
	   '/chosen/bootargs is the -append string');
	ok(grep({ /^dt: its 0x8080000 size 0x20000 phandle 0x[0-9a-f]+ msi-controller$/ } @{$r->{lines}}),
	   'the ITS child of the GICv3 node');
	is_deeply([map { { cpu => $_->{cpu}, mpidr => $_->{mpidr} } }
		   @{$r->{ready}{cpus} // []}],
		  [map { { cpu => $_, mpidr => $_ } } 0 .. $ncpu - 1],
		  "ready line: $ncpu CPUs with MPIDRs from the device tree");
	is($r->{ready}{arch} // '', 'arm64', 'ready line: arch arm64');
	for my $c (0 .. $ncpu - 1) {
		ok(grep({ /^cpu $c mpidr 0x$c up: redistributor 0x[0-9a-f]+ processor $c, LPIs on .* ICC_IGRPEN1_EL1 1$/ } @{$r->{lines}}),
		   "cpu $c up with its redistributor, LPIs and Group 1 enabled");
	}
	ok($r->{done} && $r->{done}{ok}, 'done line says ok');
}

sub probe {
	my ($r, $bdf, $step) = @_;
	return (grep { $_->{bdf} eq $bdf && $_->{step} eq $step } @{$r->{probes}})[0];
}

sub acked {
	my ($r, $cpu, $lpi) = @_;
	return scalar grep { /^cpu $cpu mpidr 0x$cpu: ICC_IAR1_EL1 acknowledged INTID $lpi \(LPI\)/ } @{$r->{lines}};
}

for my $smp (1, 4) {
	subtest "-smp $smp, no PCI device" => sub {
		my $append = "umsi.test smp=$smp umsi.msiprobe umsi.nolib";
		my $r = boot(smp => $smp, append => $append);
		check_boot($r, $smp, $append);
		is(scalar @{$r->{probes}}, 0, 'no edu, no probe');
		diag($r->{cmd} . "\n" . $r->{serial} . $r->{qemu}) unless $r->{done} && $r->{done}{ok};
	};
}

# Bus numbers a hot-plug port keeps for a bridge or switch card: one by
# default (above), umsi.hp_buses=N, or QEMU's bus-reserve= hint on the port
# (the larger); a bad value is said and the default kept.
for my $c (['umsi.hp_buses=3', '', '01-03'], ['', ',bus-reserve=5', '01-06'],
	   ['umsi.hp_buses=3', ',bus-reserve=1', '01-03'], ['umsi.hp_buses=2', ',bus-reserve=4', '01-05'],
	   ['umsi.hp_buses=40', '', '01-01']) {
	my ($arg, $prop, $buses) = @$c;
	subtest "hot-plug port room: '$arg' '$prop'" => sub {
		my $r = boot(smp => 1, append => "umsi.test umsi.nolib $arg",
			     devices => ['-device', "pcie-root-port,id=rp0,chassis=1$prop",
					 '-device', 'edu,bus=rp0']);
		ok(grep({ /^pci 00:01\.0 1b36:000c class 060400 bridge buses \Q$buses\E / } @{$r->{lines}}),
		   "root port 00:01.0 keeps buses $buses") or diag($r->{serial});
		if ($arg =~ /=40/) {
			like($r->{serial}, qr/^pci: umsi\.hp_buses=40: not 1-32; 1 kept$/m, 'a bad value is said');
		}
	};
}

subtest '-smp 4, edu behind a pcie-root-port' => sub {
	my $append = 'umsi.test rp umsi.msiprobe umsi.nolib';
	my $r = boot(smp => 4, append => $append,
		     devices => ['-device', 'pcie-root-port,id=rp0,chassis=1',
				 '-device', 'edu,bus=rp0']);
	check_boot($r, 4, $append);
	ok(grep({ /^pci 00:01\.0 1b36:000c class 060400 bridge buses 01-01 / } @{$r->{lines}}),
	   'root port 00:01.0 gets bus 01');
	ok(grep({ /^pci 01:00\.0 1234:11e8 class 00ff00 bar0 0x1[0-9a-f]{7}\+0x100000 command 0x[0-9a-f]*[67]$/ } @{$r->{lines}}),
	   'edu at 01:00.0, BAR0 (1 MiB) in the 32-bit window, memory and bus master on');
	my $p = probe($r, '01:00.0', 'mapti');
	ok($p && $p->{ok}, 'MSI through GITS_TRANSLATER acknowledged after MAPTI');
	is($p->{device_id}, 0x100, 'DeviceID is the BDF 01:00.0 (msi-map is 1:1)');
	is($p->{cpu}, 1, 'on CPU 1, the collection MAPTI named');
	is($p->{lpi}, 8192, 'as LPI 8192');
	is($p->{event_id}, 0, 'EventID 0 (the MSI data)');
	ok(acked($r, 1, 8192), 'CPU 1 printed the ICC_IAR1_EL1 acknowledgement');
	my $m = probe($r, '01:00.0', 'movi');
	ok($m && $m->{ok}, 'after MOVI the next MSI is acknowledged');
	is($m->{cpu}, 2, 'on CPU 2');
	is($m->{from}, 1, 'moved from CPU 1');
	ok(acked($r, 2, 8192), 'CPU 2 printed the ICC_IAR1_EL1 acknowledgement');
	diag($r->{cmd} . "\n" . $r->{serial} . $r->{qemu}) unless $r->{done} && $r->{done}{ok};
};

subtest '-smp 1, edu on the root bus' => sub {
	my $append = 'umsi.test root umsi.msiprobe umsi.nolib';
	my $r = boot(smp => 1, append => $append,
		     devices => ['-device', 'edu,addr=3']);
	check_boot($r, 1, $append);
	my $p = probe($r, '00:03.0', 'mapti');
	ok($p && $p->{ok}, 'MSI acknowledged on the only CPU');
	is($p->{device_id}, 0x18, 'DeviceID 0x18 = 00:03.0');
	is($p->{cpu}, 0, 'CPU 0');
	ok(acked($r, 0, 8192), 'CPU 0 printed the acknowledgement');
	ok(!probe($r, '00:03.0', 'movi'), 'one CPU: nothing to move');
	diag($r->{cmd} . "\n" . $r->{serial} . $r->{qemu}) unless $r->{done} && $r->{done}{ok};
};

subtest '-smp 2, two edus: root bus and behind a root port' => sub {
	my $append = 'umsi.test two umsi.msiprobe umsi.nolib';
	my $r = boot(smp => 2, append => $append,
		     devices => ['-device', 'edu,addr=2',
				 '-device', 'pcie-root-port,id=rp0,chassis=1,addr=4',
				 '-device', 'edu,bus=rp0']);
	check_boot($r, 2, $append);
	my ($a, $b) = (probe($r, '00:02.0', 'mapti'), probe($r, '01:00.0', 'mapti'));
	ok($a && $a->{ok} && $a->{device_id} == 0x10 && $a->{lpi} == 8192,
	   '00:02.0: DeviceID 0x10, LPI 8192, acknowledged');
	ok($b && $b->{ok} && $b->{device_id} == 0x100 && $b->{lpi} == 8193,
	   '01:00.0: DeviceID 0x100, LPI 8193, acknowledged');
	for my $bdf ('00:02.0', '01:00.0') {
		my $m = probe($r, $bdf, 'movi');
		ok($m && $m->{ok} && $m->{cpu} == 0 && $m->{from} == 1,
		   "$bdf moved from CPU 1 to CPU 0");
	}
	diag($r->{cmd} . "\n" . $r->{serial} . $r->{qemu}) unless $r->{done} && $r->{done}{ok};
};

subtest '-smp 2, entered at EL2 (virtualization=on, PSCI via SMC)' => sub {
	my $append = 'umsi.test el2 umsi.msiprobe umsi.nolib';
	my $r = boot(smp => 2, append => $append, machine => ',virtualization=on',
		     devices => ['-device', 'pcie-root-port,id=rp0,chassis=1',
				 '-device', 'edu,bus=rp0']);
	check_boot($r, 2, $append);
	ok(grep({ /^umsi arm64 kernel: entered at EL2, running at EL1,/ } @{$r->{lines}}),
	   'entered at EL2, dropped to EL1');
	ok(grep({ /^dt: psci via smc,/ } @{$r->{lines}}), 'the device tree says SMC');
	my ($p, $m) = (probe($r, '01:00.0', 'mapti'), probe($r, '01:00.0', 'movi'));
	ok($p && $p->{ok} && $p->{cpu} == 1 && $m && $m->{ok} && $m->{cpu} == 0,
	   'MSI on CPU 1, then on CPU 0 after MOVI');
	diag($r->{cmd} . "\n" . $r->{serial} . $r->{qemu}) unless $r->{done} && $r->{done}{ok};
};

# Boot with umsi.hold (the kernel stays up after its done line), then ask
# QEMU's HMP monitor what the hardware holds: its view, not the kernel's.
sub boot_held {
	my (%o) = @_;
	my $dir = tempdir('umsi-arm64-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my ($serial, $sock) = ("$dir/serial.log", "$dir/mon.sock");
	my @cmd = ('timeout', '-k', '5', 60, $QEMU,
		   '-machine', 'virt,gic-version=3,its=on', '-cpu', 'cortex-a57',
		   '-m', '256', '-smp', $o{smp}, '-nic', 'none',
		   '-display', 'none', '-no-reboot', '-serial', "file:$serial",
		   '-monitor', "unix:$sock,server=on,wait=off",
		   '-kernel', $KERNEL, '-append', 'umsi.hold umsi.msiprobe umsi.nolib',
		   @{$o{devices}});
	my $pid = fork() // die "fork: $!";
	if (!$pid) {
		open(STDOUT, '>', "$dir/qemu.out");
		open(STDERR, '>&', \*STDOUT);
		exec(@cmd) or exit(127);
	}
	my ($text, %mon) = ('');
	my $deadline = time() + 60;
	while (time() < $deadline) {
		last if waitpid($pid, POSIX::WNOHANG()) == $pid;
		$text = -f $serial ? do { local (@ARGV, $/) = ($serial); <> } : '';
		last if $text =~ /^umsi-kernel: holding \(umsi.hold\)\r?\n/m;
		sleep(0.05);
	}
	my $m = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $sock);
	if ($m) {
		my $read = sub {
			my $buf = '';
			while ($buf !~ /\(qemu\) $/) {
				my $n = sysread($m, $buf, 65536, length $buf);
				last unless $n;
			}
			$buf =~ s/\e\[[0-9;]*[A-Za-z]//g;
			$buf =~ s/\r//g;
			return $buf;
		};
		$read->();
		for my $c ($o{commands}->($text)) {
			print $m "$c\n";
			$mon{$c} = $read->();
		}
		# QEMU must read quit before the socket closes: wait for its EOF.
		print $m "quit\n";
		1 while sysread($m, my $junk, 4096);
		close($m);
	}
	waitpid($pid, 0);
	$text =~ s/\r//g;
	return { serial => $text, mon => \%mon, cmd => join(' ', @cmd) };
}

subtest 'QEMU monitor agrees: bridge bus numbers, BARs, edu MSI state' => sub {
	# The MSI capability of 01:00.0 through the ECAM window the device
	# tree gave (QEMU: 0x40_1000_0000), at the offset the kernel found.
	my $ecam_msi;
	my $r = boot_held(smp => 2,
			  devices => ['-device', 'pcie-root-port,id=rp0,chassis=1',
				      '-device', 'edu,bus=rp0'],
			  commands => sub {
				my ($text) = @_;
				my ($ecam) = $text =~ /^dt: pci ecam 0x([0-9a-f]+) /m;
				my ($cap) = $text =~ /^msi: 01:00\.0 cap 0x([0-9a-f]+) /m;
				no warnings 'portable';	# 64-bit addresses
				$ecam_msi = sprintf('xp /4wx 0x%x', hex($ecam // '0') +
						    (1 << 20) + hex($cap // '0'));
				return ('info pci', $ecam_msi);
			  });
	like($r->{serial}, qr/^msi: 1 of 1 edu device\(s\) delivered MSIs through the ITS$/m,
	     'the probe delivered');
	like($r->{serial}, qr/^umsi-kernel: holding \(umsi.hold\)$/m, 'kernel held');
	like($r->{serial}, qr/^msi: 01:00\.0 cap 0x40 /m, "edu's MSI capability at 0x40");
	my $pci = $r->{mon}{'info pci'} // '';
	like($pci, qr/secondary bus 1\.\s+subordinate bus 1\./,
	     'root port: secondary and subordinate bus 1');
	# The port is hot-plug capable: its windows are at least the room
	# left for a card (kernel/common/pci.c, pci_hp_port_room(): 2 MiB).
	like($pci, qr/memory range \[0x10100000, 0x102fffff\]/,
	     'root port: memory window around the edu BAR, 2 MiB (hot-plug room)');
	like($pci, qr/prefetchable memory range \[0x8000000000, 0x80001fffff\]/,
	     'root port: 2 MiB prefetchable window (hot-plug room)');
	like($pci, qr/Bus\s+1, device\s+0, function 0:.*?PCI device 1234:11e8.*?BAR0: 32 bit memory at 0x10100000 \[0x101fffff\]/s,
	     'edu at 01:00.0, BAR0 at 0x10100000');
	# "0000004010100040: 0x00810005 0x08090040 0x00000000 0x00000000":
	# MSI capability dword 0 (ID 5, next, control with enable and
	# 64-bit), then address low, high and data.
	my @v = map { hex } ($r->{mon}{$ecam_msi} // '') =~ /\b0x([0-9a-f]{8})\b/g;
	ok(@v == 4 && ($v[0] & 0xff) == 0x05 && ($v[0] >> 16 & 1),
	   'MSI capability enabled') or diag($r->{mon}{$ecam_msi});
	is(sprintf('0x%08x', $v[1] // 0), '0x08090040', 'MSI address low = GITS_TRANSLATER (ITS base + 0x10040)');
	is($v[2] // -1, 0, 'MSI address high 0');
	is(($v[3] // -1) & 0xffff, 0, 'MSI data = EventID 0');
	diag($r->{cmd} . "\n" . $r->{serial} . join("\n", values %{$r->{mon}}))
		unless $pci =~ /11e8/;
};

done_testing();
