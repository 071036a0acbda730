#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# AMD-Vi interrupt remapping (issue 27): QEMU's amd-iommu with
# intremap=on on q35. The kernel finds the IOMMU in the IVRS table (its
# IVHD, the IO-APIC's special entry), umsi.remap=auto hands it to uMSI's
# AMD-Vi back end, and every MSI/MSI-X message becomes 0xFEE00000 with an
# index into a table of its requester's own, which the unit finds through
# the device table entry of the DeviceID writing it.
#   - edu, e1000e, nvme, xhci (an MSI block: consecutive entries) behind
#     root ports, an edu and an e1000e behind a pcie-pci-bridge (one
#     DeviceID, one table shared), every vector fired and moved 100 times
#     under fire: each event once, on the CPU uMSI chose;
#   - the monitor reads the unit's device table and, for every vector,
#     the entry its message names in its requester's table (IV set,
#     IntCtl remapped, RemapEn, the line's APIC ID and vector): UmsiCheck
#     decodes the messages through them;
#   - umsi.remap=off on the same machine: compatibility-format messages,
#     the ready line's "remap":false;
#   - under KVM (kernel-irqchip=split) when usable.
# Wired inputs are not remapped by the back end (a directed EOI is
# needed): no INTx case here.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempfile);
use JSON::PP;
use Test::More;
use UmsiCheck;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();
plan skip_all => "$UmsiQemu::QEMU has no amd-iommu device"
	unless `$UmsiQemu::QEMU -device help 2>&1` =~ /"amd-iommu"/;

my ($fh, $img) = tempfile('umsi-nvme-XXXXXX', TMPDIR => 1, UNLINK => 1, SUFFIX => '.img');
binmode($fh);
print $fh pack('a4 V x504', 'UMSI', $_) for 0 .. 255;
close($fh);

my @zoo = ('-device', 'amd-iommu,intremap=on',
	'-device', 'edu,addr=5',
	'-device', 'pcie-root-port,id=rp1,chassis=1,addr=7', '-device', 'e1000e,bus=rp1',
	'-device', 'pcie-root-port,id=rp2,chassis=2,addr=8',
	'-drive', "if=none,id=d0,file=$img,format=raw",
	'-device', 'nvme,serial=umsi,drive=d0,bus=rp2',
	'-device', 'pcie-root-port,id=rp3,chassis=3,addr=9',
	'-device', 'nec-usb-xhci,msi=on,msix=off,bus=rp3',
	'-device', 'pcie-root-port,id=rp4,chassis=4,addr=10',
	'-device', 'pcie-pci-bridge,id=pb,bus=rp4',
	'-device', 'edu,bus=pb,addr=1', '-device', 'e1000e,bus=pb,addr=2');

sub events { my ($r, $ev) = @_; return grep { ($_->{event} // '') eq $ev } @{$r->{umsi}}; }

sub remapped_ok {
	my ($r, $tag) = @_;
	is($r->{exit}, 'held', "$tag: set-up completed and held") or diag($r->{serial});
	like($r->{serial}, qr/^ivrs: IVHD type 0x10 iommu [0-9a-f:.]+ base 0xfed80000 segment 0, \d+ device entries, ioapic devid 0xa0$/m,
	     "$tag: the IVRS table's IOMMU and the IO-APIC's DeviceID");
	like($r->{serial}, qr/^remap: on \(umsi\.remap=auto\): amd-vi unit 0xfed80000, ioapic devid 0xa0$/m,
	     "$tag: umsi.remap=auto takes it");
	like($r->{serial}, qr/^amdvi: unit 0xfed80000 control 0x[0-9a-f]+: iommu on, command buffer on; device table 0x[0-9a-f]+, \d+ DeviceIDs$/m,
	     "$tag: the unit and its command buffer on, the device table in");
	is($r->{ready}{remap}, 'amd-vi', "$tag: ready line \"remap\":\"amd-vi\"");
	ok(!grep({ /EXCEPTION|PANIC|^check: |"event":"error"/ } @{$r->{lines}}),
	   "$tag: no crash, no kernel check failure, no error line");
	my @vecs = map { my $d = $_; map { [$d, $_] } @{$d->{vectors} // []} }
		   grep { ($_->{mode} // '') =~ /^msix?$/ } @{$r->{devices}};
	ok(@vecs >= 12, "$tag: " . scalar(@vecs) . ' MSI/MSI-X vectors set up');
	my @noirte = grep { !defined $_->[1]{irte} || $_->[1]{irte} > 511 } @vecs;
	ok(!@noirte, "$tag: every vector names an entry below 512 (\"irte\")")
		or diag(join(', ', map { "$_->[0]{bdf}#$_->[1]{index}" } @noirte));
	for my $res (UmsiCheck::check($r->{monitor}, $r)) {
		ok($res->[0], "$tag: monitor: $res->[1]") or diag($res->[2]);
	}
	my $a = ($r->{monitor} // {})->{amdvi} // {};
	ok(!$a->{error} && keys %{$a->{irte} // {}} == @vecs,
	   "$tag: monitor: an entry read for each vector (" . scalar(keys %{$a->{irte} // {}}) . ')')
		or diag($a->{error} // explain($a));
	# The two functions behind the PCIe-to-PCI bridge: one DeviceID, one
	# table, entries of their own in it.
	my @behind = grep { $_->{bdf} =~ /^0000:0[0-9a-f]:0[12]\.0$/ && ($_->{mode} // '') =~ /msi/ &&
			    ($_->{driver} // '') =~ /edu|e1000e/ && $_->{bdf} !~ /^0000:00/ } @{$r->{devices}};
	my %rid = do {
		local $UmsiCheck::HW = $r->{monitor} // {};
		map { (UmsiCheck::requester($_->{bdf}) // -1) => 1 } @behind;
	};
	ok(@behind == 2 && keys %rid == 1, "$tag: edu and e1000e behind the pcie-pci-bridge share DeviceID " .
	   join(',', map { sprintf('0x%x', $_) } keys %rid))
		or diag(explain([map { $_->{bdf} } @behind]));
}

sub fires_ok {
	my ($r, $tag) = @_;
	my @f = events($r, 'fire');
	ok(@f >= 12, "$tag: " . scalar(@f) . ' fire lines');
	my @bad = grep { !$_->{ok} || $_->{wrong_cpu} || $_->{sent} != $_->{received} } @f;
	ok(!@bad, "$tag: every event once, on the CPU uMSI chose") or diag(explain(\@bad));
	# The kernel's migrate exercise leaves an MSI block alone (says so).
	my @m = grep { !$_->{skipped} } events($r, 'migrate');
	ok(@m >= 4, "$tag: " . scalar(@m) . ' IRQs moved under fire');
	my @mbad = grep { !$_->{ok} || $_->{lost} || $_->{errors} } @m;
	ok(!@mbad, "$tag: 100 moves each, nothing lost, no error") or diag(explain(\@mbad));
}

my @accels = ('tcg');
push @accels, 'kvm' if UmsiQemu::kvm_status() eq 'yes';
for my $accel (@accels) {
	subtest "$accel amd-vi: edu, e1000e, nvme, xhci block, two behind a PCIe-to-PCI bridge" => sub {
		my $r = UmsiQemu::run(accel => $accel, smp => 4, timeout => 300, hold => 1,
			($accel eq 'kvm' ? (machine => 'q35,kernel-irqchip=split') : ()),
			devices => \@zoo,
			append => 'umsi.drivers=all umsi.probe=all umsi.fire=10 umsi.migrate=100',
			monitor => sub { UmsiCheck::snapshot(@_) });
		remapped_ok($r, "$accel amd-vi");
		fires_ok($r, "$accel amd-vi");
	};
}
SKIP: {
	UmsiQemu::skip_kvm(1) if UmsiQemu::kvm_status() ne 'yes';
}

subtest 'umsi.remap=off on the same machine: no remapping' => sub {
	my $r = UmsiQemu::run(accel => 'tcg', smp => 4, timeout => 300, hold => 1,
		devices => \@zoo, append => 'umsi.drivers=all umsi.fire=3 umsi.remap=off',
		monitor => sub { UmsiCheck::snapshot(@_) });
	is($r->{exit}, 'held', 'set-up completed and held') or diag($r->{serial});
	like($r->{serial}, qr/^remap: off \(umsi\.remap=off\)$/m, 'said so');
	is($r->{ready}{remap}, JSON::PP::false, 'ready line "remap":false');
	my @f = events($r, 'fire');
	ok(@f && !grep({ !$_->{ok} || $_->{wrong_cpu} } @f), 'every event on the chosen CPU, unremapped');
	for my $res (UmsiCheck::check($r->{monitor}, $r)) {
		ok($res->[0], "monitor: $res->[1]") or diag($res->[2]);
	}
};

done_testing();
