#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# Functions behind bridges on arm64 with a GICv3 ITS (issue 24). The ITS
# names a message's source by its DeviceID, the requester ID the root
# sees, and a bridge takes its functions' requests over (PCI Express to
# PCI/PCI-X Bridge Specification 2.3): behind a conventional pci-bridge
# they are all the bridge, behind a pcie-pci-bridge all (its secondary
# bus, devfn 0). Such functions share one DeviceID, hence one ITT, and
# need EventIDs of their own in it.
#   - The issue's machine: -smp 5, a pci-bridge with edu, virtio-rng and
#     e1000e (and the bridge's own hot-plug MSI), plus a pcie-root-port ->
#     pcie-pci-bridge -> edu, e1000e and a nested pci-bridge -> edu, and
#     a root port -> x3130 switch -> nvme (no alias). Every event of every
#     function arrives once on the CPU uMSI chose (before the fix every
#     fire behind the pci-bridge was lost); the monitor sees no (DeviceID,
#     EventID) twice, with the DeviceID worked out by UmsiCheck from the
#     bridges' configuration space; QEMU's trace shows each vector's
#     (DeviceID, EventID) mapped (MAPTI) to its CPU's collection and LPI,
#     and written to GITS_TRANSLATER by that requester.
#   - 28 functions on one pci-bridge: each driven and fired, none lost.
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
my $trace_dir = tempdir('umsi-a64b-XXXXXX', TMPDIR => 1, CLEANUP => 1);

sub events { my ($r, $ev) = @_; return grep { ($_->{event} // '') eq $ev } @{$r->{umsi}}; }

sub run_held {
	my ($tag, $smp, $trace, @devices) = @_;
	my $r = UmsiQemu::run(arch => 'arm64', smp => $smp, timeout => 300, hold => 1,
		devices => [@devices,
			'-trace', 'gicv3_its_cmd_mapti', '-trace', 'gicv3_its_cmd_discard',
			'-trace', 'gicv3_its_cmd_movi', '-trace', 'gicv3_its_translation_write',
			'-D', $trace],
		append => 'umsi.drivers=all umsi.probe=all umsi.fire=3',
		monitor => sub { UmsiCheck::snapshot(@_) });
	is($r->{exit}, 'held', "$tag: set-up completed and held") or diag($r->{serial});
	ok(!grep({ /EXCEPTION|PANIC|^check: |"event":"error"/ } @{$r->{lines}}),
	   "$tag: no crash, no kernel check failure");
	for my $res (UmsiCheck::check($r->{monitor}, $r)) {
		ok($res->[0], "$tag: monitor: $res->[1]") or diag($res->[2]);
	}
	return $r;
}

# Every driven function behind a bridge fired, every event arrived.
sub fired_ok {
	my ($r, $tag, $min) = @_;
	my @f = events($r, 'fire');
	my %by = map { $_->{bdf} => 1 } @f;
	my @bdfs = map { $_->{bdf} } grep { ($_->{driver} // '') =~ /^(edu|e1000e|virtio|nvme)$/ &&
					    $_->{bdf} !~ /^0000:00:/ } @{$r->{devices}};
	ok(@bdfs >= $min, "$tag: $min functions or more behind bridges driven (" . scalar(@bdfs) . ')');
	is(scalar(grep { !$by{$_} } @bdfs), 0, "$tag: each of them fired")
		or diag(join(' ', grep { !$by{$_} } @bdfs));
	my @bad = grep { !$_->{ok} || $_->{received} != $_->{sent} || $_->{wrong_cpu} } @f;
	ok(@f && !@bad, "$tag: every event arrived once, on the CPU uMSI chose")
		or diag(join("\n", map { encode_json($_) } @bad));
}

# QEMU's own view: MAPTI of each (DeviceID, EventID) to the vector's
# collection and LPI, and the writes by that requester.
sub trace_ok {
	my ($r, $tag, $trace) = @_;
	my ($map, $writes) = UmsiCheck::its_trace($trace);
	my $first = $r->{ready}{first_lpi} // 0;
	local $UmsiCheck::HW = $r->{monitor};
	my (@bad, $n, %devid);
	for my $d (grep { ($_->{mode} // '') =~ /^msix?$/ } @{$r->{devices}}) {
		my $rid = UmsiCheck::requester($d->{bdf}) // -1;
		push @{$devid{$rid}}, $d->{bdf};
		for my $v (@{$d->{vectors} // []}) {
			my $m = $map->{"$rid/" . ($v->{event_id} // -1)};
			if (!$m || $m->[0] != $v->{cpu} || $m->[1] != $first + $v->{vector}) {
				push @bad, sprintf('%s#%d (DeviceID 0x%x, EventID %s): MAPTI %s',
					$d->{bdf}, $v->{index}, $rid, $v->{event_id} // '?',
					$m ? "collection $m->[0] LPI $m->[1]" : 'none');
			} else {
				$n++;
			}
		}
	}
	ok($n && !@bad, "$tag: ITS trace: each vector's (DeviceID, EventID) maps to its CPU's collection and LPI ($n)")
		or diag(join("\n", @bad));
	my @shared = grep { @{$devid{$_}} > 1 } sort keys %devid;
	ok(@shared, "$tag: functions share a DeviceID (" .
	   join('; ', map { sprintf('0x%x: %s', $_, "@{$devid{$_}}") } @shared) . ')');
	my @short;
	for my $f (events($r, 'fire')) {
		my ($d) = grep { $_->{bdf} eq $f->{bdf} } @{$r->{devices}};
		my ($v) = grep { $_->{index} == $f->{index} } @{($d // {})->{vectors} // []};
		my $key = (UmsiCheck::requester($f->{bdf}) // -1) . '/' . (($v // {})->{event_id} // -1);
		push @short, "$f->{bdf} #$f->{index}: " . ($writes->{$key} // 0) . " writes as $key"
			if ($writes->{$key} // 0) < $f->{received};
	}
	ok(!@short, "$tag: QEMU saw each (requester ID, EventID) written to GITS_TRANSLATER")
		or diag(join("\n", @short));
}

subtest 'pci-bridge, pcie-pci-bridge, nested, switch (-smp 5)' => sub {
	my $trace = "$trace_dir/zoo.log";
	my $tag = 'bridges';
	my $r = run_held($tag, 5, $trace,
		'-device', 'pci-bridge,id=pb1,chassis_nr=1',
		'-device', 'edu,addr=1,bus=pb1',
		'-device', 'virtio-rng-pci,addr=2,bus=pb1',
		'-device', 'e1000e,addr=5,bus=pb1',
		'-device', 'pcie-root-port,id=rp1,chassis=2',
		'-device', 'pcie-pci-bridge,id=ppb,bus=rp1',
		'-device', 'edu,bus=ppb,addr=1',
		'-device', 'e1000e,bus=ppb,addr=2',
		'-device', 'pci-bridge,id=nb,chassis_nr=3,bus=ppb,addr=3',
		'-device', 'edu,bus=nb,addr=1',
		'-device', 'pcie-root-port,id=rp2,chassis=4',
		'-device', 'x3130-upstream,id=up,bus=rp2',
		'-device', 'xio3130-downstream,id=dn,bus=up,chassis=5,slot=0',
		'-drive', "if=none,id=d0,file=$img,format=raw",
		'-device', 'nvme,serial=umsi,drive=d0,bus=dn');
	fired_ok($r, $tag, 7);
	trace_ok($r, $tag, $trace);
	my ($pb) = grep { $_->{bdf} eq '0000:00:01.0' } @{$r->{devices}};
	is(($pb // {})->{mode}, 'msi', "$tag: the pci-bridge's own MSI set up beside its functions");
	diag($r->{cmd}) unless Test::More->builder->is_passing;
};

subtest '28 functions on one pci-bridge (-smp 4)' => sub {
	my $trace = "$trace_dir/many.log";
	my $tag = '28 functions';
	my @fns = map { ('-device', ($_ % 2 ? 'virtio-rng-pci' : 'edu') .
			 ",bus=pb1,addr=" . sprintf('0x%x', $_ + 1)) } 0 .. 27;
	my $r = run_held($tag, 4, $trace, '-device', 'pci-bridge,id=pb1,chassis_nr=1', @fns);
	fired_ok($r, $tag, 28);
	trace_ok($r, $tag, $trace);
};

done_testing();
