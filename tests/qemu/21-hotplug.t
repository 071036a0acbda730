#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# PCIe native hot-plug, many times over: QEMU's q35 with ACPI hot-plug off
# (pcie-root-port then offers native hot-plug), three root ports, and
# devices added and removed through QMP one at a time, round-robin over
# the ports, cycling through e1000e, virtio-net-pci, nvme (backed by a
# read-only image node that outlives every nvme), edu, virtio-rng-pci and
# nec-usb-xhci. After each add: the kernel's device line, the device's
# interrupts fired on the CPU uMSI chose (fire lines), the hardware state
# read through the monitor (config space, MSI-X table) matching the line,
# and the BARs inside the port's windows. After each removal: QEMU said
# DEVICE_DELETED (xhci: see below), the function is gone from QEMU's PCI
# list, and the vectors the matrix holds are back at the ready line's
# count; the kernel heap stops growing once every kind was seen once.
#
# Two more x86 runs put intel-iommu, then amd-iommu, in front (two cycles
# of each kind): each card hot-added behind a root port must fall in the
# device scope the kernel handed uMSI's VT-d back end at boot, or get its
# own interrupt table in the IOMMU's device table, and its messages' table
# entries (read through the unit) must send the line's vector to its CPU
# (VT-d: and validate its requester ID).
#
# Cycles: UMSI_HOTPLUG_CYCLES (default 100). Timings per cycle (host
# clock: device_add to the kernel's slot line, device_del to
# DEVICE_DELETED; kernel clock: event to first interrupt) are printed
# as a note.
#
# QEMU 7.2 fact: after device_del of nec-usb-xhci the function goes (QEMU
# stops listing it, its configuration space reads all-ones) but QEMU
# never emits DEVICE_DELETED for it, for any guest: its xhci-core child
# holds a strong QOM link back to the PCI device, so the object is never
# finalized. Debian's Linux 6.1 with xhci_hcd bound gets no event either
# (`make xhci-unplug-check`). For xhci the test checks query-pci instead.
use strict;
use warnings;
no warnings 'portable';	# 64-bit BAR addresses
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempfile);
use JSON::PP;
use List::Util qw(sum max min);
use Test::More;
use Time::HiRes qw(time);
use UmsiQemu;
use UmsiCheck;
use UmsiTest;

UmsiTest::require_library();

our $cycles = $ENV{UMSI_HOTPLUG_CYCLES} // 100;

my ($fh, $img) = tempfile('umsi-hp-XXXXXX', TMPDIR => 1, UNLINK => 1, SUFFIX => '.img');
binmode($fh);
print $fh pack('a4 V x504', 'UMSI', $_) for 0 .. 255;
close($fh);

my @kinds = (
	[e1000e => {}],
	['virtio-net-pci' => {}],
	[nvme => { serial => 'umsi', drive => 'img0' }],
	[edu => {}],
	['virtio-rng-pci' => {}],
	['nec-usb-xhci' => { msi => 'on', msix => 'off' }],
);
my @ports = ('rp1', 'rp2', 'rp3');

sub decode_lines {
	my ($text) = @_;
	my @o;
	for (split(/\n/, $text)) {
		next unless /^UMSI (\{.*\})\s*$/;
		my $x = eval { decode_json($1) };
		push @o, $x if $x;
	}
	return @o;
}

# The function at $bdf as QEMU's monitor shows it (config space, MSI-X
# table), or undef when nothing answers there.
sub read_function {
	my ($mon, $ecam, $bdf) = @_;
	my (undef, $bus, $dev, $fn) = UmsiCheck::parse_bdf($bdf);
	my @w = $mon->read32($ecam + ($bus << 20) + ($dev << 15) + ($fn << 12), 64);
	return undef if @w != 64 || ($w[0] & 0xffff) == 0xffff;
	return UmsiCheck::decode_function($mon, \@w);
}

# Does QEMU's own PCI list (QMP query-pci) still hold a function on $bus?
sub qemu_lists_bus {
	my ($qmp, $bus) = @_;
	my $found = 0;
	my $walk;
	$walk = sub {
		for my $d (@{$_[0]}) {
			$found = 1 if $d->{bus} == $bus;
			$walk->($d->{pci_bridge}{devices} // []) if $d->{pci_bridge};
		}
	};
	$walk->($_->{devices}) for @{$qmp->cmd('query-pci')};
	return $found;
}

sub hotplug_cycles {
	my ($mon, $text, $ctx) = @_;
	my ($qmp, $ser) = ($ctx->{qmp}, $ctx->{serial});
	my ($ready) = grep { $_->{event} eq 'ready' } decode_lines($text);
	my %res = (ready => $ready, cycles => []);
	my $ecam = UmsiCheck::ecam_base($mon);
	# The machine as held at the ready line: the architecture and its
	# interrupt controller, against which each message is judged.
	local $UmsiCheck::HW = UmsiCheck::snapshot($mon, $text);
	my %secondary;
	for (grep { /^pci \S+ 1b36:000c .* bus (\d+)-/ } split(/\n/, $text)) {
		/^pci 0000:00:(\S+)\.0 .* bus (\d+)-/ and $secondary{hex $1} = $2;
	}
	for my $i (0 .. $cycles - 1) {
		my ($kind, $props) = @{$kinds[$i % @kinds]};
		my $port = $ports[$i % @ports];
		my $bus = $secondary{8 + $i % @ports};
		my $bdf = sprintf('0000:%02x:00.0', $bus);
		my %c = (i => $i, kind => $kind, port => $port, bdf => $bdf, bad => []);
		push @{$res{cycles}}, \%c;
		my $bad = sub { push @{$c{bad}}, "cycle $i $kind on $port: @_" if @_ };

		$ser->mark;
		my $t0 = time();
		eval { $qmp->cmd('device_add', driver => $kind, id => "hp$i", bus => $port, %$props) };
		if ($@) { $bad->("device_add: $@"); last; }
		my $slot = $ser->wait_line(qr/^UMSI \{"event":"slot".*"action":"add"/, 30);
		$c{t_add} = time() - $t0;
		if (!$slot) { $bad->('no slot line after device_add'); last; }
		my @objs = decode_lines($ser->since_mark);
		my ($sl) = grep { $_->{event} eq 'slot' } @objs;
		$c{first_irq_us} = $sl->{first_irq_us};
		$c{ready_us} = $sl->{ready_us};
		$c{heap_add} = $sl->{heap};
		$bad->("slot add not ok: $slot") unless $sl->{ok};
		my $devs = UmsiQemu::devices(@objs);
		my ($d) = grep { $_->{bdf} eq $bdf } @$devs;
		$bad->("no device line for $bdf") unless $d;
		$d //= { vectors => [] };
		$c{mode} = $d->{mode};
		$c{vectors} = $d->{vectors};
		$bad->("no driver took it ($d->{mode})") unless $d->{driver};
		$bad->("not fresh from hot-plug: $d->{fresh}")
			if $d->{msix_cap} && ($d->{fresh} // '') ne 'hotplug';
		my @fires = grep { $_->{event} eq 'fire' && $_->{bdf} eq $bdf } @objs;
		$bad->('no fire line') unless @fires;
		for my $f (@fires) {
			my ($v) = grep { $_->{index} == $f->{index} } @{$d->{vectors}};
			$bad->("fire index $f->{index} not ok: sent $f->{sent} received $f->{received} wrong_cpu $f->{wrong_cpu}")
				unless $f->{ok} && $f->{sent} == $f->{received} && !$f->{wrong_cpu};
			$bad->("fire index $f->{index} on cpu $f->{cpu}, device line says " .
			       ($v ? $v->{cpu} : 'nothing'))
				unless $v && $v->{cpu} == $f->{cpu} && $v->{vector} == $f->{vector};
		}
		$bad->(grep { /EXCEPTION|PANIC|^check: |probe failed/ } split(/\n/, $ser->since_mark));
		# The hardware, read through the monitor; with remapping, the
		# table entries its messages name too (read through the unit).
		my $hw = read_function($mon, $ecam, $bdf);
		my $remap = $hw && $ready && $ready->{remap};
		local $UmsiCheck::HW = $remap ?
			{ %$UmsiCheck::HW, functions => { lc($bdf) => $hw }, ioapic => {} } :
			$UmsiCheck::HW;
		UmsiCheck::remap_snapshot($mon, $text . "\n" . $ser->since_mark,
					  $UmsiCheck::HW) if $remap;
		if (!$d->{bdf}) {
			# nothing to compare
		} elsif (!$hw) {
			$bad->("$bdf does not answer through ECAM");
		} else {
			my %pairs;
			my @p = UmsiCheck::check_device($d, $hw, \%pairs, {});
			$bad->("hardware: @p") if @p;
			for (split(/\n/, $ser->since_mark)) {
				next unless /^pci \Q$bdf\E bar (\d) (\S+)(?: prefetch)? 0x([0-9a-f]+)/;
				my $b = $hw->{bars}[$1];
				$bad->("bar $1: kernel $2 0x$3, config space " .
				       ($b ? sprintf('%s 0x%x', $b->{kind}, $b->{addr}) : 'none'))
					if !$b || $b->{kind} ne $2 || $b->{addr} != hex($3);
			}
		}

		$ser->mark;
		$t0 = time();
		eval { $qmp->cmd('device_del', id => "hp$i") };
		if ($@) { $bad->("device_del: $@"); last; }
		if ($kind =~ /xhci/) {
			# Gone from QEMU's list once the kernel powered the slot off.
			$ser->wait_line(qr/^UMSI \{"event":"slot".*"action":"remove"/, 30);
			$c{t_del} = time() - $t0;
			$bad->('still listed by query-pci') if qemu_lists_bus($qmp, $bus);
		} else {
			my $e = $qmp->wait_event('DEVICE_DELETED', 30,
						 sub { ($_[0]{device} // '') eq "hp$i" });
			$c{t_del} = time() - $t0;
			$bad->('no DEVICE_DELETED') unless $e;
		}
		my $rm = $ser->wait_line(qr/^UMSI \{"event":"slot".*"action":"remove"/, 30);
		if (!$rm) { $bad->('no slot remove line'); last; }
		my @gone = decode_lines($ser->since_mark);
		my ($removed) = grep { $_->{event} eq 'removed' && $_->{bdf} eq $bdf } @gone;
		my ($srm) = grep { $_->{event} eq 'slot' } @gone;
		$c{heap} = $srm->{heap};
		$c{phys} = $srm->{phys};
		$c{remove_us} = $srm->{remove_us};
		$bad->('no removed line') unless $removed;
		$bad->("allocated $removed->{allocated} after removal, ready said $ready->{allocated}")
			if $removed && $removed->{allocated} != $ready->{allocated};
		$bad->("removal marked surprise") if $removed && $removed->{surprise};
		$bad->("function still answers after removal")
			if read_function($mon, $ecam, $bdf);
	}
	return \%res;
}

# arm64: from QEMU's ITS trace, every DeviceID of a hot-added function
# was mapped (MAPD V=1) and unmapped (V=0) once per cycle, every event
# mapped to an LPI (MAPTI) discarded again, and the LPIs reused: a device
# gets the very LPIs the same kind got one round earlier (identities are
# handed out lowest first, so one kept by uMSI would push it elsewhere).
sub its_books {
	my ($trace, $c) = @_;
	my (%hot, %live, %valid, @lpis, @bad);
	my ($mapd_on, $mapd_off, $mapti, $discard) = (0, 0, 0, 0);
	for (@$c) {
		my (undef, $bus) = UmsiCheck::parse_bdf($_->{bdf});
		$hot{$bus << 8} = 1;
	}
	open(my $t, '<', $trace) or return fail("ITS trace: $!");
	while (<$t>) {
		if (/MAPD DeviceID 0x([0-9a-f]+) .* V (\d)/) {
			next unless $hot{hex $1};
			if ($2) {
				push @bad, "DeviceID 0x$1 mapped twice" if $valid{hex $1}++;
				push @lpis, [];
				$mapd_on++;
			} else {
				$mapd_off++;
				push @bad, "DeviceID 0x$1 unmapped while not mapped" unless delete $valid{hex $1};
			}
		} elsif (/MAPTI DeviceID 0x([0-9a-f]+) EventID 0x([0-9a-f]+) .* pINTID 0x([0-9a-f]+)/) {
			next unless $hot{hex $1};
			$mapti++;
			$live{"$1/$2"} = hex $3;
			push @{$lpis[-1]}, hex $3 if @lpis;
		} elsif (/DISCARD DeviceID 0x([0-9a-f]+) EventID 0x([0-9a-f]+)/) {
			next unless $hot{hex $1};
			$discard++;
			push @bad, "DISCARD of $1/$2, never mapped" unless defined delete $live{"$1/$2"};
		}
	}
	close($t);
	ok(!@bad && !%live && !%valid && $mapd_on == @$c && $mapd_off == @$c && $mapti == $discard,
	   "ITS (QEMU trace): each hot-added DeviceID mapped and unmapped once a cycle ($mapd_on/$mapd_off), "
	   . "every event mapped was discarded ($mapti/$discard)")
		or diag(join('; ', @bad, map({ "still mapped: $_" } sort keys %live),
			     map({ sprintf('DeviceID 0x%x still valid', $_) } sort keys %valid)));
	my @moved;
	for my $i (scalar @kinds .. $#lpis) {
		my ($now, $then) = map { join(',', sort { $a <=> $b } @{$lpis[$_]}) } $i, $i - @kinds;
		push @moved, "cycle $i: LPIs $now, cycle " . ($i - @kinds) . ": $then" if $now ne $then;
	}
	my %all = map { $_ => 1 } map { @$_ } @lpis;
	ok(!@moved && @lpis == @$c, sprintf('LPIs reused: each device got the LPIs its kind got a round '
					    . 'earlier (%d distinct over %d cycles)', scalar keys %all, scalar @lpis))
		or diag(join('; ', @moved[0 .. min(5, $#moved)]));
}

my $kvm = UmsiQemu::kvm_status();
# x86 under TCG and KVM; arm64 (GICv3 ITS) and riscv64 (IMSIC) under TCG,
# where the kernel enumerates like a firmware and leaves each hot-plug
# port room for a card (kernel/common/pci.c, pci_hp_port_room()).
# UMSI_HOTPLUG_ARCH=arm64 (a comma list) runs only those.
my %only = map { $_ => 1 } split(/,/, $ENV{UMSI_HOTPLUG_ARCH} // '');
# x86 with intel-iommu too (a shorter run: two of each kind): the kernel
# hands uMSI's VT-d back end the DMAR unit with its device scope as
# requester ranges, read at boot, and every card hot-added behind a root
# port must fall in its port's range and be remapped.
for my $run (['x86_64', 'tcg'], ['x86_64', 'kvm'], ['x86_64', 'tcg', 'vtd'],
	     ['x86_64', 'tcg', 'amd-vi'], ['arm64', 'tcg'], ['riscv64', 'tcg']) {
	my ($arch, $accel, $remap) = @$run;
	next if %only && !$only{$arch};
	my $x86 = $arch eq 'x86_64';
	my $n = $remap ? min($cycles, 2 * @kinds) : $cycles;
    SKIP: {
		if ($accel eq 'kvm' && $kvm ne 'yes') {
			UmsiQemu::skip_kvm(1);
			last SKIP;
		}
		if (!$x86 && !UmsiQemu::have_qemu($arch)) {
			skip("$arch: QEMU for it not installed", 1);
		}
		my $kernel = $arch eq 'arm64' ? $UmsiQemu::ARM64_KERNEL : $UmsiQemu::RV_KERNEL;
		if (!$x86 && !-f $kernel) {
			skip("$arch: $kernel not built", 1);
		}
		my $iommu = !$remap ? undef : $remap eq 'vtd' ? 'intel-iommu' : 'amd-iommu';
		if ($remap && `$UmsiQemu::QEMU -device help 2>&1` !~ /"$iommu"/) {
			skip("$UmsiQemu::QEMU has no $iommu device", 1);
		}
		subtest "$arch $accel" . ($remap ? " $remap" : '') . " $n hot-plug cycles" => sub {
			local $cycles = $n;
			my $t_start = time();
			# arm64: QEMU's ITS says what was mapped and unmapped.
			my (undef, $trace) = tempfile('umsi-hp-its-XXXXXX', TMPDIR => 1, UNLINK => 1);
			my @its = $arch eq 'arm64' ?
				(map({ ('-trace', "gicv3_its_cmd_$_") } qw(mapd mapti discard)), '-D', $trace) : ();
			my $r = UmsiQemu::run(($x86 ? (accel => $accel) : (arch => $arch)), smp => 4,
				timeout => 60 + ($x86 ? 6 : 12) * $cycles, hold => 1, qmp => 1,
				append => 'umsi.drivers=all umsi.probe=all umsi.fire=3',
				devices => [($remap ? ('-device', "$iommu,intremap=on") : ()),
					    ($x86 ? ('-global', 'ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off') : ()),
					    '-blockdev', "driver=file,node-name=file0,filename=$img,read-only=on",
					    '-blockdev', 'driver=raw,node-name=img0,file=file0,read-only=on',
					    map({ ('-device', sprintf('pcie-root-port,id=rp%d,chassis=%d,addr=0x%x', $_, $_, 7 + $_)) } 1 .. 3),
					    @its],
				monitor => \&hotplug_cycles);
			my $res = $r->{monitor};
			is($r->{exit}, 'held', 'machine came up and held') or diag($r->{serial});
			if ($remap && $remap eq 'vtd') {
				is($r->{ready}{remap}, 'vt-d', 'remapping on: ready line "remap":"vt-d"');
				like($r->{serial}, qr/^remap: uMSI takes the VT-d back end: unit 0xfed90000, .* (\d+) scope ranges$/m,
				     'the unit handed over with its device scope');
			} elsif ($remap) {
				is($r->{ready}{remap}, 'amd-vi', 'remapping on: ready line "remap":"amd-vi"');
				like($r->{serial}, qr/^remap: uMSI takes the AMD-Vi back end: unit 0xfed80000, /m,
				     'the IOMMU handed over');
			}
			ok($res && ref $res eq 'HASH' && !$res->{error}, 'hot-plug cycles ran')
				or diag(explain($res));
			$res = { cycles => [] } unless ref $res eq 'HASH';
			my @c = @{$res->{cycles}};
			my $ready = $res->{ready} // {};

			my @ports_up = grep { ($_->{driver} // '') eq 'pcieport' } @{$r->{devices}};
			is(scalar @ports_up, 3, 'three hot-plug ports claimed by the port service');
			is(scalar(grep { $_->{mode} eq 'msix' } @ports_up), 3, 'each on its own MSI-X vector');
			is(scalar @c, $cycles, "$cycles add/remove cycles done");
			my @bad = map { @{$_->{bad}} } @c;
			ok(!@bad, 'every cycle: device line, interrupts on the chosen CPU, hardware as reported, '
			   . 'DEVICE_DELETED, vectors back to the ready count') or diag(join("\n", @bad[0 .. min(30, $#bad)]));
			its_books($trace, \@c) if @its;
			my %kinds_seen = map { $_->{kind} => 1 } grep { !@{$_->{bad}} } @c;
			is(scalar keys %kinds_seen, $cycles >= 6 ? 6 : $cycles, 'every kind of device went through');
			my $warm = 2 * @kinds;
			if (@c > $warm + 1) {
				my @heap = map { $_->{heap} // 0 } @c;
				is($heap[-1], $heap[$warm - 1],
				   "kernel heap unchanged after cycle $warm (no leak in drivers or uMSI)")
					or diag("heap per cycle: @heap");
				if ($arch eq 'arm64') {
					my @phys = map { $_->{phys} // -1 } @c;
					is($phys[-1], $phys[$warm - 1],
					   "ITS table region (every device's ITT, host phys_alloc) unchanged after cycle $warm")
						or diag("phys per cycle: @phys");
				}
			}
			if (@c) {
				my @add = map { $_->{t_add} // 0 } @c;
				my @del = map { $_->{t_del} // 0 } @c;
				my @irq = map { ($_->{first_irq_us} // 0) / 1000 } @c;
				note(sprintf('%d cycles in %.1f s (%s); device_add to slot line: mean %.0f ms, max %.0f ms; '
					     . 'slot event to first interrupt (kernel clock): mean %.0f ms, max %.0f ms; '
					     . 'device_del to DEVICE_DELETED: mean %.0f ms, max %.0f ms',
					     scalar @c, time() - $t_start, $r->{accel}, 1000 * sum(@add) / @add,
					     1000 * max(@add), sum(@irq) / @irq, max(@irq),
					     1000 * sum(@del) / @del, 1000 * max(@del)));
			}
		};
	}
}
done_testing();
