#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# Functions behind bridges on x86 (issue 24): every topology QEMU's q35
# builds, with several functions that the root sees under one requester
# ID (PCI Express to PCI/PCI-X Bridge Specification 2.3):
#   - pcie-root-port -> pcie-pci-bridge -> e1000e (a PCIe function,
#     aliased all the same), edu, virtio-rng: requester (bus, devfn 0);
#   - pcie-pci-bridge -> pci-bridge -> edu (nested: the last bridge on the
#     way, the pcie-pci-bridge, names it);
#   - pci-bridge on the root bus -> edu, e1000e: the bridge's own ID, and
#     the bridge's own hot-plug MSI beside them;
#   - pcie-root-port -> x3130 switch -> nvme: no alias.
# With intel-iommu,intremap=on every message goes through an entry that
# validates the requester ID the root sees; UmsiCheck works that ID out
# on its own from the bridges' configuration space and checks each entry
# against it. Every vector fires and arrives on the CPU uMSI chose (lost
# before the fix: the entry validated the function's own ID). The same
# machine without an IOMMU, as a control.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempfile);
use Test::More;
use UmsiCheck;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();

my ($fh, $img) = tempfile('umsi-nvme-XXXXXX', TMPDIR => 1, UNLINK => 1, SUFFIX => '.img');
binmode($fh);
print $fh pack('a4 V x504', 'UMSI', $_) for 0 .. 255;
close($fh);

my @topo = (
	'-device', 'pcie-root-port,id=rp1,chassis=1,addr=7',
	'-device', 'pcie-pci-bridge,id=ppb,bus=rp1',
	'-device', 'e1000e,bus=ppb,addr=1',
	'-device', 'edu,bus=ppb,addr=2',
	'-device', 'virtio-rng-pci,bus=ppb,addr=3',
	'-device', 'pci-bridge,id=nb,chassis_nr=5,bus=ppb,addr=4',
	'-device', 'edu,bus=nb,addr=1',
	'-device', 'pci-bridge,id=pb,chassis_nr=6,addr=9',
	'-device', 'edu,bus=pb,addr=1',
	'-device', 'e1000e,bus=pb,addr=2',
	'-device', 'pcie-root-port,id=rp2,chassis=2,addr=8',
	'-device', 'x3130-upstream,id=up,bus=rp2',
	'-device', 'xio3130-downstream,id=dn,bus=up,chassis=3,slot=0',
	'-drive', "if=none,id=d0,file=$img,format=raw",
	'-device', 'nvme,serial=umsi,drive=d0,bus=dn');

sub events { my ($r, $ev) = @_; return grep { ($_->{event} // '') eq $ev } @{$r->{umsi}}; }

# Every function behind a bridge, by (vendor, device), fired exactly.
sub bridged_ok {
	my ($r, $tag) = @_;
	my @f = events($r, 'fire');
	my %by = map { $_->{bdf} => 1 } @f;
	my @bdfs = map { $_->{bdf} } grep { ($_->{driver} // '') =~ /^(edu|e1000e|virtio|nvme)$/ &&
					    $_->{bdf} !~ /^0000:00:/ } @{$r->{devices}};
	ok(@bdfs >= 7, "$tag: the functions behind bridges were driven (" . scalar(@bdfs) . ')')
		or diag(join(' ', map { $_->{bdf} } @{$r->{devices}}));
	is(scalar(grep { !$by{$_} } @bdfs), 0, "$tag: each of them fired")
		or diag(join(' ', grep { !$by{$_} } @bdfs));
	is(scalar(grep { !$_->{ok} || $_->{received} != $_->{sent} } @f), 0,
	   "$tag: every vector arrived, exactly, on the CPU uMSI chose")
		or diag(join("\n", map { JSON::PP::encode_json($_) } grep { !$_->{ok} } @f));
	my ($pb) = grep { $_->{bdf} eq '0000:00:09.0' } @{$r->{devices}};
	is(($pb // {})->{mode}, 'msi', "$tag: the pci-bridge's own hot-plug MSI set up beside its functions");
	# What the checker works out, against the topology QEMU was given.
	local $UmsiCheck::HW = $r->{monitor};
	my %want = map { $_->{bdf} => UmsiCheck::requester($_->{bdf}) } @{$r->{devices}};
	my %seen;
	for my $d (@{$r->{devices}}) {
		my $rid = $want{$d->{bdf}};
		push @{$seen{sprintf('%04x', $rid // 0xffff)}}, $d->{bdf};
	}
	my @shared = grep { @{$seen{$_}} > 1 } sort keys %seen;
	ok(@shared >= 2, "$tag: functions share a requester ID behind each conventional bridge (" .
	   join('; ', map { "$_: @{$seen{$_}}" } @shared) . ')');
}

my $iommu = `$UmsiQemu::QEMU -device help 2>&1` =~ /"intel-iommu"/;
for my $c (['intel-iommu,intremap=on', 'remap'], [undef, 'no IOMMU']) {
	my ($dev, $tag) = @$c;
    SKIP: {
		skip "$UmsiQemu::QEMU has no intel-iommu device", 1 if $dev && !$iommu;
		subtest "$tag: functions behind pcie-pci-bridge, pci-bridge (nested), a switch" => sub {
			my $r = UmsiTest::run_checked(smp => 4, timeout => 180,
				devices => [$dev ? ('-device', $dev) : (), @topo],
				append => 'umsi.drivers=all umsi.probe=all umsi.fire=3',
				name => $tag);
			is(!!$r->{ready}{remap}, !!$dev, "$tag: remapping " . ($dev ? 'on' : 'off'));
			bridged_ok($r, $tag);
			is(scalar(events($r, 'ir_fault')), 0, "$tag: no remapping fault");
		};
	}
}

done_testing();
