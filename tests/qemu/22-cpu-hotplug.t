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
# them masked and everything else as reported. A second machine asks a
# CPU that holds a multi-message MSI block (xhci) to go: uMSI says EBUSY,
# the CPU stays, the block keeps firing there.
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
		subtest "$accel a multi-message MSI block keeps its CPU" => sub {
			my $r = UmsiTest::run_checked(accel => $accel, smp => 3, name => "$accel block",
				devices => ['-device', 'nec-usb-xhci,msi=on,msix=off,addr=2'],
				append => 'umsi.drivers=xhci umsi.fire=3 umsi.offline=1');
			my ($x) = UmsiTest::devices_by_id($r, '0x1033', '0x0194');
			my ($c) = grep { ($_->{event} // '') eq 'cpu' } @{$r->{umsi}};
			is($x->{vectors}[0]{cpu}, 1, 'the xhci block sits on CPU 1');
			is($c->{error}, 'EBUSY', 'offline of CPU 1 refused: EBUSY');
			ok($c->{online}, 'CPU 1 stays online');
			my @f = grep { ($_->{event} // '') eq 'fire' } @{$r->{umsi}};
			is(scalar(grep { $_->{ok} && $_->{cpu} == 1 } @f), 2,
			   'the block fired on CPU 1 before and after the refusal');
			ok($r->{ready}{cpus}[1]{online}, 'ready line: CPU 1 online');
		};
	}
}
done_testing();
