#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# SR-IOV (issue 29): QEMU's nvme as a physical function with 4 virtual
# functions, behind a pcie-root-port, on x86 (with and without VT-d
# interrupt remapping) and arm64 (GICv3 ITS). The kernel's nvme driver
# enables the VFs through umsi_pci_sriov_enable(), gives each secondary
# controller 2 queues and 2 interrupts (NVMe Virtualization Management)
# and brings it online, serves each VF with the same driver (MSI-X
# through uMSI, one-sector reads checked), and disables them again:
# 100 cycles on each architecture (umsi.sriov_cycles=100; 10 under VT-d),
# each ending in a sriov_cycle line
# whose "allocated" must equal the count before it, then 4 VFs are left
# enabled and every device line, VFs included, is checked against the
# hardware through QEMU's monitor: a VF's identity and BARs are worked
# out from its PF's SR-IOV capability (UmsiCheck::vf_identity), its
# MSI-X table read and decoded; under VT-d each IRTE must validate the
# VF's own requester ID; on the ITS the MAPD/MAPTI trace must map the
# VFs' own DeviceIDs.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempfile);
use JSON::PP;
use Test::More;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();

my ($fh, $img) = tempfile('umsi-sriov-XXXXXX', TMPDIR => 1, UNLINK => 1, SUFFIX => '.img');
binmode($fh);
print $fh pack('a4 V x504', 'UMSI', $_) for 0 .. 255;
close($fh);

my @nvme = ('-device', 'pcie-root-port,id=rp1,chassis=1',
	    '-drive', "if=none,id=d0,file=$img,format=raw",
	    '-device', 'nvme-subsys,id=s0',
	    '-device', 'nvme,serial=umsi-sriov,subsys=s0,bus=rp1,sriov_max_vfs=4,' .
		'sriov_vq_flexible=8,sriov_vi_flexible=8,max_ioqpairs=12,msix_qsize=13',
	    '-device', 'nvme-ns,drive=d0,nsid=1');
my $PF = '0000:01:00.0';
my @VF = map { "0000:01:00.$_" } 1 .. 4;

sub events { my ($r, $e) = @_; return grep { ($_->{event} // '') eq $e } @{$r->{umsi}}; }

# What every run must show: the cycles, the VFs left, their lines.
sub check_run {
	my ($r, $tag, $cycles) = @_;
	my @c = events($r, 'sriov_cycle');
	is(scalar @c, $cycles, "$tag: $cycles enable/disable cycles");
	is(scalar(grep { $_->{allocated} == $_->{allocated_before} } @c), $cycles,
	   "$tag: after every cycle the matrix holds what it held before");
	is(scalar(grep { $_->{allocated_up} >= $_->{allocated_before} + 8 } @c), $cycles,
	   "$tag: while up, every cycle's VFs held their 8 vectors");
	ok(@c < 3 || $c[-1]{heap} == $c[1]{heap},
	   "$tag: the kernel heap is flat from the second cycle on")
		or diag("heap after cycle 2: $c[1]{heap}, after the last: $c[-1]{heap}");
	my ($s) = events($r, 'sriov');
	ok($s && $s->{vfs} == 4 && $s->{pf} eq $PF, "$tag: 4 VFs left enabled on $PF");
	for my $i (0 .. 3) {
		my $d = UmsiTest::device($r, $VF[$i]);
		ok($d && $d->{mode} eq 'msix' && $d->{pf} eq $PF && $d->{vf_index} == $i &&
		   $d->{nvec} == 2 && ($d->{driver} // '') eq 'nvme',
		   "$tag: $VF[$i] is VF $i of $PF, nvme, 2 MSI-X vectors")
			or diag(explain($d));
	}
	my @f = grep { $_->{bdf} =~ /^0000:01:00\.[1-4]$/ } events($r, 'fire');
	is(scalar @f, 8 * ($cycles + 1), "$tag: every VF vector fired in every cycle");
	is(scalar(grep { $_->{ok} && $_->{received} == $_->{sent} } @f), scalar @f,
	   "$tag: every VF command one handler call, on the CPU uMSI chose");
	my @n = grep { $_->{bdf} =~ /^0000:01:00\.[1-4]$/ } events($r, 'nvme');
	ok(@n == 4 * ($cycles + 1) && !grep({ !$_->{reads} || $_->{bad_reads} } @n),
	   "$tag: every VF's reads returned their sectors");
	return \@c;
}

subtest 'x86 tcg: 100 cycles, VFs ready at once (umsi.sriov_nowait)' => sub {
	my $r = UmsiTest::run_checked(accel => 'tcg', smp => 2, timeout => 300,
		devices => \@nvme,
		append => 'umsi.drivers=nvme umsi.fire=3 umsi.sriov=01:00.0:4 ' .
			  'umsi.sriov_cycles=100 umsi.sriov_nowait',
		name => 'x86 sriov');
	check_run($r, 'x86', 100);
};

subtest 'x86 tcg: the specification\'s waits' => sub {
	my $r = UmsiTest::run_checked(accel => 'tcg', smp => 2, timeout => 300,
		devices => \@nvme,
		append => 'umsi.drivers=nvme umsi.fire=3 umsi.sriov=01:00.0:4 umsi.sriov_cycles=2',
		name => 'x86 sriov waits');
	my $c = check_run($r, 'waits', 2);
	# 100 ms after VF Enable, 1 s after clearing it: each cycle waits both.
	is(scalar(grep { $_->{ms} >= 1100 } @$c), 2,
	   'each cycle took at least the 1.1 s the specification asks to wait');
};

SKIP: {
	skip 'no intel-iommu device', 1
		unless `$UmsiQemu::QEMU -device help 2>&1` =~ /"intel-iommu"/;
	subtest 'x86 tcg under VT-d: each VF\'s IRTEs validate its own requester ID' => sub {
		my $r = UmsiTest::run_checked(accel => 'tcg', smp => 2, timeout => 300,
			devices => ['-device', 'intel-iommu,intremap=on', @nvme],
			append => 'umsi.drivers=nvme umsi.fire=3 umsi.sriov=01:00.0:4 ' .
				  'umsi.sriov_cycles=10 umsi.sriov_nowait',
			name => 'vtd sriov');
		ok($r->{ready} && $r->{ready}{remap}, 'remapping on');
		check_run($r, 'vtd', 10);
		for my $bdf (@VF) {
			my $d = UmsiTest::device($r, $bdf);
			ok(@{$d->{vectors} // []} == 2 && !grep({ !defined $_->{irte} } @{$d->{vectors}}),
			   "vtd: $bdf: each vector names its IRTE");
		}
	};
}

# Hot removal of the PF while its 4 VFs are up: the VFs go with it, every
# vector of all five functions comes back, QEMU deletes the device.
subtest 'x86 tcg: the PF hot-removed with its VFs enabled' => sub {
	my @hot = ('-global', 'ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off',
		   map { s/^nvme,serial=umsi-sriov,/nvme,id=nv,serial=umsi-sriov,/r } @nvme);
	my $r = UmsiQemu::run(smp => 2, timeout => 120, hold => 1, qmp => 1,
		devices => \@hot,
		append => 'umsi.drivers=nvme umsi.fire=3 umsi.sriov=01:00.0:4 umsi.sriov_nowait',
		monitor => sub {
			my ($mon, $text, $ctx) = @_;
			my ($q, $sl) = ($ctx->{qmp}, $ctx->{serial});
			my %o;
			$sl->mark;
			$q->cmd('device_del', id => 'nv');
			$o{deleted} = $q->wait_event('DEVICE_DELETED', 30,
				sub { ($_[0]{device} // '') eq 'nv' }) ? 1 : 0;
			$o{rm} = $sl->wait_line(qr/^UMSI \{"event":"slot".*"action":"remove"/, 30);
			$o{text} = $sl->since_mark;
			return \%o;
		});
	my $o = $r->{monitor} // {};
	is($r->{exit}, 'held', 'set-up completed and held') or diag($r->{serial});
	my ($s) = events($r, 'sriov');
	ok($s && $s->{vfs} == 4, '4 VFs up before the removal');
	ok($o->{deleted}, 'QEMU deleted the PF (DEVICE_DELETED)');
	my ($rm) = map { /^UMSI (\{.*\})\s*$/ ? (eval { JSON::PP::decode_json($1) } // ()) : () }
		   grep { /"action":"remove"/ } split(/\n/, $o->{text} // '');
	my $port = UmsiTest::device($r, '0000:00:02.0') // {};
	ok($rm && $rm->{allocated} == scalar(@{$port->{vectors} // []}),
	   'after the removal the matrix holds the port\'s vector alone: PF and VFs gave everything back')
		or diag("remove line: " . ($o->{rm} // 'none') . "\n" . ($o->{text} // ''));
	ok(!grep({ /EXCEPTION|PANIC|^check: / } split(/\n/, $o->{text} // '')),
	   'no crash, no kernel check failure during the removal');
};

SKIP: {
	skip 'qemu-system-aarch64 or the arm64 kernel missing', 1
		unless UmsiQemu::have_qemu('arm64') && -f $UmsiQemu::ARM64_KERNEL;
	subtest 'arm64 tcg (GICv3 ITS): 100 cycles, the VFs\' own DeviceIDs' => sub {
		my ($tfh, $trace) = tempfile('umsi-sriov-its-XXXXXX', TMPDIR => 1, UNLINK => 1);
		close($tfh);
		my $r = UmsiTest::run_checked(arch => 'arm64', smp => 2, timeout => 400,
			devices => [@nvme, '-trace', 'gicv3_its_cmd_mapti',
				    '-trace', 'gicv3_its_cmd_discard', '-trace', 'gicv3_its_cmd_movi',
				    '-trace', 'gicv3_its_translation_write', '-D', $trace],
			append => 'umsi.drivers=nvme umsi.fire=3 umsi.sriov=01:00.0:4 ' .
				  'umsi.sriov_cycles=100 umsi.sriov_nowait',
			name => 'arm64 sriov');
		check_run($r, 'arm64', 100);
		# The ITS's own view: each VF's vectors are mapped under the VF's
		# own routing ID as DeviceID, and its messages came with it.
		my ($map, $writes) = UmsiCheck::its_trace($trace);
		my $first = $r->{ready}{first_lpi} // 8192;
		my @bad;
		for my $i (0 .. 3) {
			my $d = UmsiTest::device($r, $VF[$i]) or next;
			my $rid = (1 << 8) | ($i + 1);
			for my $v (@{$d->{vectors} // []}) {
				my $m = $map->{"$rid/" . ($v->{event_id} // -1)};
				push @bad, "$VF[$i]#$v->{index}: no MAPTI under DeviceID $rid to collection $v->{cpu} LPI " .
					($first + $v->{vector})
					unless $m && $m->[0] == $v->{cpu} && $m->[1] == $first + $v->{vector};
				push @bad, "$VF[$i]#$v->{index}: no GITS_TRANSLATER write with requester $rid"
					unless $writes->{"$rid/" . ($v->{event_id} // -1)};
			}
		}
		ok(!@bad, 'ITS trace: every VF vector mapped and written under the VF\'s own DeviceID')
			or diag(join("\n", @bad));
	};
}

SKIP: {
	skip 'qemu-system-riscv64 or the riscv64 kernel missing', 1
		unless UmsiQemu::have_qemu('riscv64') && -f $UmsiQemu::RV_KERNEL;
	subtest 'riscv64 tcg (AIA IMSIC): 100 cycles' => sub {
		my $r = UmsiTest::run_checked(arch => 'riscv64', smp => 2, timeout => 400,
			devices => \@nvme,
			append => 'umsi.drivers=nvme umsi.fire=3 umsi.sriov=01:00.0:4 ' .
				  'umsi.sriov_cycles=100 umsi.sriov_nowait',
			name => 'riscv64 sriov');
		check_run($r, 'riscv64', 100);
	};
}

done_testing();
