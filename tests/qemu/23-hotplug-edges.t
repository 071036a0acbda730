#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# The harder cases of PCIe native hot-plug (QEMU q35, ACPI hot-plug off):
#
#  - a card that is a bridge with a device behind it: with the machine
#    stopped, a PCIe-to-PCI bridge goes into root port rp1 (bus-reserve=1
#    leaves it a bus number) and an edu behind the bridge; on `cont` the
#    kernel powers the slot, numbers the bridge's bus, gives the bridge a
#    window inside the port's and the edu a BAR inside the bridge's, and
#    the edu's MSI crosses the bridge; its removal takes both functions,
#    deepest first. Also on arm64 and riscv64 (virt), where the kernel
#    numbers the buses itself and honours bus-reserve= as SeaBIOS does;
#  - a card whose BAR cannot fit the port's windows (nvme with a 64 MiB
#    controller memory buffer in a 2 MiB window): reported, nothing set
#    up, the slot powered off with its attention indicator on (QEMU then
#    deletes the card), no vector taken;
#  - surprise removal (test aid umsi.hp_surprise): the card is gone before
#    the kernel stops its driver; first seen through the slot's presence
#    event, then (umsi.hp_surprise=driver) by the driver, which finds its
#    function reading all-ones. Either way every vector comes back and no
#    access to the vanished function hangs;
#  - a port whose interrupt storms (test aid umsi.hp_storm=N: its vector
#    sent N times with no slot event): the handler says "not mine", and
#    uMSI's storm detection disables the IRQ as it would any other's
#    (masked in the MSI-X table, as the monitor shows). A pause of more
#    than 100 ms between two of them (a loaded host) restarts uMSI's
#    count, so the aid keeps sending until the IRQ is disabled, up to
#    300,000.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use JSON::PP;
use Test::More;
use Time::HiRes ();
use UmsiQemu;
use UmsiCheck;
use UmsiTest;

UmsiTest::require_library();

my @machine = ('-global', 'ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off',
	       '-blockdev', 'driver=null-co,node-name=nul0',
	       '-device', 'pcie-root-port,id=rp1,chassis=1,addr=8,bus-reserve=1',
	       '-device', 'pcie-root-port,id=rp2,chassis=2,addr=9');

sub objs {
	my ($text) = @_;
	return map { /^UMSI (\{.*\})\s*$/ ? (eval { decode_json($1) } // ()) : () }
		split(/\n/, $text);
}

sub read_fn {
	my ($mon, $ecam, $bdf) = @_;
	my (undef, $bus, $dev, $fn) = UmsiCheck::parse_bdf($bdf);
	my @w = $mon->read32($ecam + ($bus << 20) + ($dev << 15) + ($fn << 12), 64);
	return undef if @w != 64 || ($w[0] & 0xffff) == 0xffff;
	return { words => \@w, f => UmsiCheck::decode_function($mon, \@w) };
}

# Memory window of a bridge from its config words: [base, limit].
sub mem_window {
	my ($w) = @_;
	my $v = $w->[0x20 / 4];
	return (($v & 0xfff0) << 16, (($v >> 16) & 0xfff0) << 16 | 0xfffff);
}

sub bridge_and_nospace {
	my ($mon, $text, $ctx) = @_;
	my ($q, $s) = ($ctx->{qmp}, $ctx->{serial});
	my %o;
	my $ecam = UmsiCheck::ecam_base($mon);
	($o{ready}) = grep { $_->{event} eq 'ready' } objs($text);
	# The interrupt controller the messages are judged against.
	$o{hw} = UmsiCheck::snapshot($mon, $text);

	$s->mark;
	$q->cmd('stop');
	$q->cmd('device_add', driver => 'pcie-pci-bridge', id => 'br', bus => 'rp1');
	$q->cmd('device_add', driver => 'edu', id => 'e1', bus => 'br', addr => '3');
	$q->cmd('cont');
	$o{add} = $s->wait_line(qr/^UMSI \{"event":"slot".*"action":"add"/, 30);
	$o{add_text} = $s->since_mark;
	$o{rp1} = read_fn($mon, $ecam, '0000:00:08.0');
	$o{br} = read_fn($mon, $ecam, '0000:01:00.0');
	$o{edu} = read_fn($mon, $ecam, '0000:02:03.0');

	$s->mark;
	$q->cmd('device_del', id => 'br');
	my %del;
	for (1 .. 2) {
		my $e = $q->wait_event('DEVICE_DELETED', 10) or last;
		$del{$e->{data}{device} // ''} = 1;
	}
	$o{deleted} = [sort keys %del];
	$o{rm} = $s->wait_line(qr/^UMSI \{"event":"slot".*"action":"remove"/, 30);
	$o{rm_text} = $s->since_mark;
	$o{edu_after} = read_fn($mon, $ecam, '0000:02:03.0');

	$s->mark;
	$q->cmd('device_add', driver => 'nvme', id => 'big', bus => 'rp2',
		serial => 'big', drive => 'nul0', cmb_size_mb => 64);
	$o{big} = $s->wait_line(qr/^UMSI \{"event":"slot".*"action":"add"/, 30);
	$o{big_deleted} = $q->wait_event('DEVICE_DELETED', 10,
					 sub { ($_[0]{device} // '') eq 'big' }) ? 1 : 0;
	$o{rp2} = read_fn($mon, $ecam, '0000:00:09.0');
	$o{big_text} = $s->since_mark;
	return \%o;
}

# x86 (SeaBIOS numbers the buses), arm64 and riscv64 (the kernel numbers
# them, as a firmware, and keeps rp1 the bus its bus-reserve=1 hint asks
# for: kernel/common/pci.c, pci_hp_port_room()).
for my $arch ('x86_64', 'arm64', 'riscv64') {
    SKIP: {
	my $x86 = $arch eq 'x86_64';
	skip("$arch: QEMU for it not installed", 1)
		if !$x86 && !UmsiQemu::have_qemu($arch);
	my $kernel = $arch eq 'arm64' ? $UmsiQemu::ARM64_KERNEL : $UmsiQemu::RV_KERNEL;
	skip("$arch: $kernel not built", 1) if !$x86 && !-f $kernel;
subtest "$arch: a bridge with a device behind it; a card too big for its port" => sub {
	my $r = UmsiQemu::run(($x86 ? () : (arch => $arch)), smp => 2, timeout => 90, hold => 1,
			      qmp => 1, devices => [$x86 ? @machine : @machine[2 .. $#machine]],
			      append => 'umsi.drivers=all umsi.probe=all umsi.fire=5',
			      monitor => \&bridge_and_nospace);
	my $o = $r->{monitor};
	is($r->{exit}, 'held', 'machine up') or diag($r->{serial});
	ok(ref $o eq 'HASH', 'the scenario ran') or return diag(explain($o));
	my @add = objs($o->{add_text});
	my ($slot) = grep { $_->{event} eq 'slot' } @add;
	ok($slot && $slot->{ok}, 'slot rp1 came up');
	is($slot->{functions}, 2, 'two functions: the bridge and the edu behind it');
	like($o->{add_text}, qr/^pci 0000:01:00\.0 1b36:000e .* bridge .* bus 2-2/m,
	     'the bridge got bus 2 (the port\'s reserved number)');
	my $devs = UmsiQemu::devices(@add);
	my ($edu) = grep { $_->{bdf} eq '0000:02:03.0' } @$devs;
	is($edu->{driver}, 'edu', 'the edu behind the bridge went to its driver');
	is($edu->{fresh} // 'hotplug', 'hotplug', 'added fresh from reset');
	my ($f) = grep { $_->{event} eq 'fire' } @add;
	ok($f && $f->{ok} && $f->{received} == 5 && $f->{cpu} == $edu->{vectors}[0]{cpu},
	   'its MSI crossed the bridge: 5 raised, 5 handled on the chosen CPU') or diag(explain($f));
	my %pairs;
	local $UmsiCheck::HW = $o->{hw};
	for my $bdf ('0000:01:00.0', '0000:02:03.0') {
		my ($d) = grep { $_->{bdf} eq $bdf } @$devs;
		my $hw = $o->{$bdf eq '0000:01:00.0' ? 'br' : 'edu'};
		my @p = $d && $hw ? UmsiCheck::check_device($d, $hw->{f}, \%pairs, {}) : ('missing');
		ok(!@p, "$bdf: the monitor agrees with its line") or diag("@p");
	}
	my ($pb, $pl) = mem_window($o->{rp1}{words});
	my ($bb, $bl) = mem_window($o->{br}{words});
	my $bar = $o->{edu}{f}{bars}[0]{addr};
	ok($bb >= $pb && $bl <= $pl, sprintf('bridge window 0x%x-0x%x inside the port\'s 0x%x-0x%x',
					     $bb, $bl, $pb, $pl));
	ok($bar >= $bb && $bar + 0x100000 - 1 <= $bl,
	   sprintf('edu BAR 0x%x inside the bridge window', $bar));
	my @rm = objs($o->{rm_text});
	is_deeply([map { $_->{bdf} } grep { $_->{event} eq 'removed' } @rm],
		  ['0000:02:03.0', '0000:01:00.0'], 'removal: the edu first, then the bridge');
	ok(!grep({ $_->{event} eq 'removed' && $_->{allocated} != $o->{ready}{allocated} } @rm),
	   "vectors back to the ready line's $o->{ready}{allocated}");
	is_deeply($o->{deleted}, ['br', 'e1'], 'QEMU deleted both');
	ok(!$o->{edu_after}, 'the edu no longer answers');

	my @big = objs($o->{big_text});
	my ($bs) = grep { $_->{event} eq 'slot' } @big;
	ok($bs && !$bs->{ok}, 'the nvme with a 64 MiB BAR is refused');
	like($bs->{reason} // '', qr/^no_bar_space 0000:03:00\.0 bar 2 size 0x4000000/,
	     'reason: no BAR space, which BAR, how big');
	is($bs->{allocated}, $o->{ready}{allocated}, 'no vector taken');
	ok(!grep({ $_->{event} eq 'device' } @big), 'no device line: nothing set up');
	ok($o->{big_deleted}, 'slot powered off, QEMU deleted the card');
	my $ctl = ($o->{rp2}{words}[0x6c / 4] // 0) & 0xffff;
	is(sprintf('%x', ($ctl >> 6) & 3), '1', 'rp2 attention indicator on');
	ok($ctl & 0x400, 'rp2 power off');
};
    }
}

sub surprise {
	my ($mon, $text, $ctx) = @_;
	my ($q, $s) = ($ctx->{qmp}, $ctx->{serial});
	my %o;
	($o{ready}) = grep { $_->{event} eq 'ready' } objs($text);
	$s->mark;
	$q->cmd('device_add', driver => 'nvme', id => 'n1', bus => 'rp1',
		serial => 'n1', drive => 'nul0');
	$o{add} = $s->wait_line(qr/^UMSI \{"event":"slot".*"action":"add"/, 30);
	$s->mark;
	$q->cmd('device_del', id => 'n1');
	$o{deleted} = $q->wait_event('DEVICE_DELETED', 10) ? 1 : 0;
	$o{rm} = $s->wait_line(qr/^UMSI \{"event":"slot".*"action":"remove"/, 30);
	$o{rm_text} = $s->since_mark;
	# The slot still works: a card again.
	$s->mark;
	$q->cmd('device_add', driver => 'edu', id => 'e2', bus => 'rp1');
	$o{again} = $s->wait_line(qr/^UMSI \{"event":"slot".*"action":"add"/, 30);
	$o{again_text} = $s->since_mark;
	return \%o;
}

for my $who ('event', 'driver') {
	subtest "surprise removal, seen first by the $who" => sub {
		my $r = UmsiQemu::run(smp => 2, timeout => 60, hold => 1, qmp => 1,
				      devices => \@machine,
				      append => "umsi.drivers=all umsi.fire=3 umsi.hp_surprise=$who",
				      monitor => \&surprise);
		my $o = $r->{monitor};
		ok(ref $o eq 'HASH' && $o->{add}, 'nvme added') or return diag($r->{serial});
		ok($o->{deleted}, 'the card is gone (QEMU: DEVICE_DELETED)');
		ok($o->{rm}, 'the kernel brought the slot down') or diag($o->{rm_text});
		my @rm = objs($o->{rm_text});
		my ($removed) = grep { $_->{event} eq 'removed' } @rm;
		ok($removed && $removed->{surprise}, 'removed, as a surprise');
		is($removed->{allocated}, $o->{ready}{allocated}, 'every vector back');
		if ($who eq 'driver') {
			like($o->{rm_text}, qr/^umsi: 0000:01:00\.0 reads all-ones: gone$/m,
			     'the driver found all-ones and reported it');
			like($o->{rm_text}, qr/^pciehp 0000:00:08\.0: events.*function-gone/m,
			     'the port service acted on the driver\'s report');
		}
		ok(!grep({ /EXCEPTION|PANIC/ } split(/\n/, $r->{serial})), 'no fault');
		like($o->{again} // '', qr/"ok":true/, 'the slot takes a card again');
		my ($f) = grep { $_->{event} eq 'fire' } objs($o->{again_text});
		ok($f && $f->{ok}, 'and it fires');
	};
}
subtest 'a port interrupting for nothing is disabled by storm detection' => sub {
	my $r = UmsiTest::run_checked(smp => 2, timeout => 120, name => 'storm',
		devices => [@machine[0 .. 1], @machine[4 .. 5]],
		append => 'umsi.hp_storm=300000');
	my ($st) = grep { ($_->{event} // '') eq 'storm' } @{$r->{umsi}};
	ok($st && $st->{disabled}, 'the port\'s IRQ was disabled') or diag(explain($st));
	cmp_ok($st->{not_mine}, '>=', 99900, "after $st->{not_mine} calls that found no event");
	like($r->{serial}, qr/nobody cared/, 'uMSI said why');
	my ($p) = grep { $_->{bdf} eq '0000:00:08.0' } @{$r->{devices}};
	ok($p->{vectors}[0]{disabled}, 'the port\'s line marks its vector disabled (masked, per the monitor)');
};
# The Attention Button (PCIe 4.0, 6.7.1.5): device_del presses it. By
# default the kernel blinks the Power Indicator and waits the 5-second
# abort interval before bringing the slot down; QEMU 7.2 refuses a second
# device_del while the first is pending ("already in the process of
# unplug"), so the operator's cancel, a second press within the window,
# cannot be played from QEMU; with umsi.hp_button_ms=0
# the removal is at once.
sub button {
	my ($mon, $text, $ctx) = @_;
	my ($q, $s) = ($ctx->{qmp}, $ctx->{serial});
	my %o;
	($o{ready}) = grep { $_->{event} eq 'ready' } objs($text);
	$s->mark;
	$q->cmd('device_add', driver => 'edu', id => 'b1', bus => 'rp1');
	$o{add} = $s->wait_line(qr/^UMSI \{"event":"slot".*"action":"add"/, 30);
	$s->mark;
	my $t0 = Time::HiRes::time();
	$q->cmd('device_del', id => 'b1');
	$o{button} = $s->wait_line(qr/^UMSI \{"event":"slot".*"action":"button"/, 10)
		if $ctx->{expect_window};
	eval { $q->cmd('device_del', id => 'b1') };
	$o{second} = $@ ? "$@" : 'accepted';
	$o{deleted} = $q->wait_event('DEVICE_DELETED', 20) ? 1 : 0;
	$o{wall} = Time::HiRes::time() - $t0;
	$o{rm} = $s->wait_line(qr/^UMSI \{"event":"slot".*"action":"remove"/, 30);
	$o{rm_text} = $s->since_mark;
	return \%o;
}

for my $case (['the default: the 5-second abort interval', 1, ''],
	      ['umsi.hp_button_ms=0: removal at once', 0, 'umsi.hp_button_ms=0']) {
	my ($what, $window, $param) = @$case;
	subtest "Attention Button, $what" => sub {
		my $r = UmsiQemu::run(smp => 2, timeout => 90, hold => 1, qmp => 1,
				      devices => \@machine, spec_button => $window,
				      append => "umsi.drivers=all $param",
				      monitor => sub { $_[2]{expect_window} = $window; button(@_) });
		my $o = $r->{monitor};
		ok(ref $o eq 'HASH' && $o->{add}, 'edu hot-added') or return diag($r->{serial});
		like($r->{serial}, $window ? qr/^pciehp: attention button abort interval 5000 ms$/m
					   : qr/^pciehp: attention button abort interval 0 ms \(removal at once\)$/m,
		     'the kernel says which interval it keeps');
		ok($o->{deleted}, 'QEMU deleted the card (DEVICE_DELETED)');
		my @rm = objs($o->{rm_text});
		my ($btn) = grep { $_->{event} eq 'slot' && ($_->{action} // '') eq 'button' } @rm;
		my ($slot) = grep { $_->{event} eq 'slot' && ($_->{action} // '') eq 'remove' } @rm;
		my ($removed) = grep { $_->{event} eq 'removed' } @rm;
		ok($slot && $removed && !$removed->{surprise}, 'the slot came down, not as a surprise')
			or diag($o->{rm_text});
		is($removed->{allocated}, $o->{ready}{allocated}, 'every vector back');
		if ($window) {
			ok($btn && $btn->{abort_ms} == 5000, 'the button opened a 5000 ms abort window');
			ok($slot && $slot->{remove_us} >= 5000000,
			   sprintf('removed after the window: %.2f s from the press', ($slot->{remove_us} // 0) / 1e6));
			ok($o->{wall} >= 5, sprintf('QEMU waited %.1f s for the guest', $o->{wall}));
			like($o->{second}, qr/already in the process of unplug/,
			     'QEMU refuses a second press while the removal is pending')
				or diag("second device_del: $o->{second}");
		} else {
			ok(!$btn, 'no abort window');
			ok($slot && $slot->{remove_us} < 1000000,
			   sprintf('removed at once: %.0f ms', ($slot->{remove_us} // 0) / 1e3));
		}
		diag($r->{cmd}) unless Test::More->builder->is_passing;
	};
}

# The operator's cancel (test aid umsi.hp_button_aid=cancel: the button
# pressed again one second into the window, as the hardware would queue
# it): the slot stays up, its Power Indicator back on, nothing removed.
sub button_cancel {
	my ($mon, $text, $ctx) = @_;
	my ($q, $s) = ($ctx->{qmp}, $ctx->{serial});
	my %o;
	($o{ready}) = grep { $_->{event} eq 'ready' } objs($text);
	$s->mark;
	$q->cmd('device_add', driver => 'edu', id => 'c1', bus => 'rp1');
	$o{add} = $s->wait_line(qr/^UMSI \{"event":"slot".*"action":"add"/, 30);
	$s->mark;
	$q->cmd('device_del', id => 'c1');
	$o{cancel} = $s->wait_line(qr/^UMSI \{"event":"slot".*"action":"cancel"/, 10);
	# Past the end of the window: still nothing removed.
	$o{deleted} = $q->wait_event('DEVICE_DELETED', 7) ? 1 : 0;
	$o{text} = $s->since_mark;
	$o{rp1} = read_fn($mon, UmsiCheck::ecam_base($mon), '0000:00:08.0');
	return \%o;
}

subtest 'Attention Button, pressed again within the window: cancelled' => sub {
	my $r = UmsiQemu::run(smp => 2, timeout => 90, hold => 1, qmp => 1,
			      devices => \@machine, spec_button => 1,
			      append => 'umsi.drivers=all umsi.hp_button_aid=cancel',
			      monitor => \&button_cancel);
	my $o = $r->{monitor};
	ok(ref $o eq 'HASH' && $o->{add}, 'edu hot-added') or return diag($r->{serial});
	my @ev = objs($o->{text});
	my ($btn) = grep { $_->{event} eq 'slot' && ($_->{action} // '') eq 'button' } @ev;
	my ($cancel) = grep { $_->{event} eq 'slot' && ($_->{action} // '') eq 'cancel' } @ev;
	ok($btn && $cancel, 'the window opened and the second press cancelled it')
		or diag($o->{text});
	ok($cancel && $cancel->{after_us} >= 900000 && $cancel->{after_us} < 5000000,
	   sprintf('cancelled %.2f s into the window', ($cancel->{after_us} // 0) / 1e6));
	ok(!grep({ ($_->{action} // '') eq 'remove' || $_->{event} eq 'removed' } @ev),
	   'nothing removed, also after the window would have ended');
	ok(!$o->{deleted}, 'QEMU still has the card');
	is($cancel->{allocated}, $o->{ready}{allocated} + 1, "the edu's vector is still held");
	my $ctl = (($o->{rp1} // {})->{words}[0x6c / 4] // 0) & 0xffff;
	is(($ctl >> 8) & 3, 1, 'Power Indicator on again');
	ok(!($ctl & 0x400), 'slot power still on');
	diag($r->{cmd}) unless Test::More->builder->is_passing;
};

done_testing();
