#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# CPUs leaving and coming back, on gapped APIC IDs (-smp 6,sockets=2,
# cores=3: 0,1,2,4,5,6). After set-up and a first round of fires, CPUs 2
# (APIC ID 2) and 4 (APIC ID 5) go offline (umsi_cpu_offline, then the
# CPU parks with its local APIC disabled), then CPU 4 comes back
# (INIT/STARTUP, umsi_cpu_online). The devices: edu (MSI), e1000e (five
# MSI-X vectors, unmanaged: they move), nvme with managed vectors
# (nvme.managed: one per CPU, shut down when their CPU leaves), and
# virtio-rng.
#
# Checked: every IRQ that was on a leaving CPU fires afterwards, exactly,
# on an online CPU; a managed vector of a gone CPU takes no interrupt (the
# event raised into it waits in the device's pending bit) and takes it on
# its CPU when that CPU is back; the ready line says which CPUs are
# online; the device lines mark shut-down vectors, and the monitor finds
# them masked and everything else as reported. A second machine takes
# away the CPU that holds a multi-message MSI block (xhci): the block
# moves whole to one online CPU (the messages share one address, so all
# of them go together, to consecutive aligned vectors there), the CPU
# leaves, and every message still arrives exactly once on the new CPU.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempfile);
use Test::More;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();

my ($fh, $img) = tempfile('umsi-cpu-XXXXXX', TMPDIR => 1, UNLINK => 1, SUFFIX => '.img');
binmode($fh);
print $fh pack('a4 V x504', 'UMSI', $_) for 0 .. 255;
close($fh);

# The UMSI objects in phases: before the first cpu event, while CPUs are
# offline (up to the "online" step), after they came back.
sub phases {
	my ($r) = @_;
	my @p = ([], [], []);
	my $ph = 0;
	for my $o (@{$r->{umsi}}) {
		my $ev = $o->{event} // '';
		$ph = 1 if $ph == 0 && $ev eq 'cpu';
		$ph = 2 if $ph == 1 && $ev eq 'step' && $o->{step} eq 'online';
		push @{$p[$ph]}, $o;
	}
	return @p;
}

my $kvm = UmsiQemu::kvm_status();
for my $accel ('tcg', 'kvm') {
    SKIP: {
		if ($accel eq 'kvm' && $kvm ne 'yes') {
			UmsiQemu::skip_kvm(1);
			last SKIP;
		}
		subtest "$accel CPUs 2 and 4 offline, 4 back" => sub {
			my $r = UmsiTest::run_checked(accel => $accel,
				smp => '6,sockets=2,cores=3', name => "$accel cpu",
				devices => ['-drive', "if=none,id=d0,file=$img,format=raw",
					    '-device', 'edu,addr=2', '-device', 'e1000e,addr=3',
					    '-device', 'nvme,serial=umsi,drive=d0,addr=4',
					    '-device', 'virtio-rng-pci,addr=5'],
				append => 'umsi.drivers=all umsi.fire=5 nvme.managed '
					  . 'umsi.offline=2,4 umsi.online=4');
			my ($before, $off, $back) = phases($r);
			my @cpu = grep { ($_->{event} // '') eq 'cpu' } @{$r->{umsi}};
			is_deeply([map { [$_->{cpu}, $_->{apic_id}, $_->{online} ? 1 : 0] } @cpu],
				  [[2, 2, 0], [4, 5, 0], [4, 5, 1]],
				  'CPU 2 (APIC ID 2) and CPU 4 (APIC ID 5) went, CPU 4 came back')
				or diag(explain(\@cpu));
			ok(!grep({ $_->{error} } @cpu), 'no offline/online refused');
			cmp_ok($cpu[0]{irqs}, '>', 0, "CPU 2 held $cpu[0]{irqs} IRQs when it left");
			my @f0 = grep { $_->{event} eq 'fire' } @$before;
			ok(scalar(grep { $_->{cpu} == 2 } @f0) && scalar(grep { $_->{cpu} == 4 } @f0),
			   'before: some vectors fired on CPU 2 and on CPU 4');
			my @f1 = grep { $_->{event} eq 'fire' } @$off;
			my @h1 = grep { $_->{event} eq 'held' } @$off;
			is(scalar @f1 + scalar @h1, scalar @f0, 'offline: every vector fired or held');
			ok(!grep({ !$_->{ok} } @f1), 'offline: every fire exact, on the CPU uMSI chose')
				or diag(explain([grep { !$_->{ok} } @f1]));
			ok(!grep({ $_->{cpu} == 2 || $_->{cpu} == 4 } @f1),
			   'offline: nothing fired on CPU 2 or 4');
			is_deeply([sort map { "$_->{driver}:$_->{cpu}" } @h1], ['nvme:2', 'nvme:4'],
				  'offline: the managed nvme vectors of CPUs 2 and 4 are shut down');
			ok(!grep({ !$_->{ok} || $_->{pending} != 1 || $_->{received} != $_->{sent} - 1 } @h1),
			   'offline: the event raised into each waits in the pending bit, undelivered')
				or diag(explain(\@h1));
			my ($h4) = grep { $_->{cpu} == 4 } @h1;
			my @f2 = grep { $_->{event} eq 'fire' } @$back;
			my ($f4) = grep { $h4 && $_->{irq} == $h4->{irq} } @f2;
			ok($f4 && $f4->{ok} && $f4->{cpu} == 4 && $f4->{received} == $f4->{sent},
			   'back: the held nvme event arrived on CPU 4, and its vector fires there again')
				or diag(explain($f4));
			ok(!grep({ !$_->{ok} } @f2), 'back: every fire exact');
			my @h2 = grep { $_->{event} eq 'held' } @$back;
			is_deeply([map { $_->{cpu} } @h2], [2], 'back: only CPU 2\'s managed vector still held');
			is_deeply([map { $_->{online} ? 1 : 0 } @{$r->{ready}{cpus}}], [1, 1, 0, 1, 1, 1],
				  'ready line: CPU 2 offline, the others online');
			my ($nv) = UmsiTest::devices_by_id($r, '0x1b36', '0x0010');
			is_deeply([map { $_->{cpu} } grep { $_->{shutdown} } @{$nv->{vectors}}], [2],
				  'nvme line: the vector of CPU 2 marked shut down (the monitor found it masked)');
			my @on_gone = grep { $_->{cpu} == 2 && !$_->{shutdown} }
				map { @{$_->{vectors} // []} } @{$r->{devices}};
			ok(!@on_gone, 'no live vector targets offline CPU 2') or diag(explain(\@on_gone));
		};
		subtest "$accel a multi-message MSI block moves whole when its CPU leaves" => sub {
			# edu takes CPU 0 first, so the xhci block lands on CPU 1;
			# the keyboard makes messages 1-3 carry transfer events.
			my $r = UmsiTest::run_checked(accel => $accel, smp => 3, name => "$accel block",
				devices => ['-device', 'edu,addr=2',
					    '-device', 'nec-usb-xhci,id=xhci,msi=on,msix=off,addr=3',
					    '-device', 'usb-kbd,bus=xhci.0'],
				append => 'umsi.drivers=edu,xhci umsi.fire=3 umsi.offline=1');
			my ($before, $off) = phases($r);
			my ($x) = UmsiTest::devices_by_id($r, '0x1033', '0x0194');
			my @xv = @{$x->{vectors} // []};
			my ($c) = grep { ($_->{event} // '') eq 'cpu' } @{$r->{umsi}};
			my @f0 = grep { ($_->{event} // '') eq 'fire' && $_->{driver} eq 'xhci' } @$before;
			my @f1 = grep { ($_->{event} // '') eq 'fire' && $_->{driver} eq 'xhci' } @$off;
			ok(@f0 > 1 && !grep({ $_->{cpu} != 1 || !$_->{ok} } @f0),
			   sprintf('before: the %d-message xhci block fired on CPU 1', scalar @f0))
				or diag(explain(\@f0));
			ok($c && !$c->{error}, 'offline of CPU 1 accepted (no EBUSY)')
				or diag(explain($c));
			ok($c && !$c->{online}, 'CPU 1 went offline');
			cmp_ok($c->{irqs} // 0, '>=', scalar @f0, 'CPU 1 held the block when it left');
			my %cpus = map { $_->{cpu} => 1 } @xv;
			my ($to) = keys %cpus;
			ok(@xv == @f0 && keys %cpus == 1 && $to != 1,
			   'device line: the whole block on one other CPU' . (defined $to ? " ($to)" : ''))
				or diag(explain(\@xv));
			ok(@xv && $xv[0]{vector} % ($x->{reserved} // 1) == 0 &&
			   !grep({ $xv[$_]{vector} != $xv[0]{vector} + $_ } 0 .. $#xv),
			   "the block's vectors consecutive and aligned to $x->{reserved}")
				or diag(explain(\@xv));
			is(scalar @f1, scalar @f0, 'after: every message fired again');
			ok(!grep({ !$_->{ok} || $_->{received} != $_->{sent} || $_->{wrong_cpu} ||
				   $_->{cpu} == 1 || $_->{cpu} != $to } @f1),
			   'after: every event arrived once, on the new CPU of the block')
				or diag(explain(\@f1));
			ok(!$r->{ready}{cpus}[1]{online}, 'ready line: CPU 1 offline');
			my @on_gone = grep { $_->{cpu} == 1 } map { @{$_->{vectors} // []} } @{$r->{devices}};
			ok(!@on_gone, 'no vector targets offline CPU 1') or diag(explain(\@on_gone));
		};
	}
}
done_testing();
