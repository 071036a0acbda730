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
#     DeviceID, one table shared), an edu behind a conventional
#     pci-bridge, every vector fired and moved 100 times under fire: each
#     event once, on the CPU uMSI chose;
#   - the IVRS table's alias ranges for the two bridges' secondary buses
#     (the PCIe-to-PCI bridge's as its bus, devfn 0; the PCI-to-PCI
#     bridge's as the bridge): each function's entries are in its alias's
#     table;
#   - the monitor reads the unit's device table and, for every vector,
#     the entry its message names in its requester's table (IV set,
#     IntCtl remapped, RemapEn, the line's APIC ID and vector): UmsiCheck
#     decodes the messages through them;
#   - umsi.remap=off on the same machine: compatibility-format messages,
#     the ready line's "remap":false;
#   - under KVM (kernel-irqchip=split) when usable.
#   - INTx (pci_nomsi): three edus (one behind a root port, whose line the
#     port shares) on level IO-APIC inputs whose entries hold an index of
#     the IO-APIC DeviceID's own table (compatibility format, destination
#     0); the unit's message has no trigger mode, so the kernel ends each
#     line at the IO-APIC's EOI register (a directed EOI): 100 events a
#     line and 100 moves under fire, each once, on the chosen CPU; the
#     monitor reads each entry and its IO-APIC table entry (TCG and KVM);
#   - forgery (umsi.forge=1, edu's DMA and its own MSI): the e1000e's
#     message written by edu's DMA (QEMU 7.2 gives DMA no requester ID and
#     takes it for the IO-APIC's, whose table has none: aborted), the
#     e1000e's index as edu's own MSI (edu's table: at most edu's own
#     handler runs, never the e1000e's), a compatibility-format message,
#     an index of edu's table nobody owns and one past its end: none
#     reaches a handler it names or is spurious; with umsi.remap=off the
#     same DMA write does reach the e1000e's handler.
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
	'-device', 'edu,bus=pb,addr=1', '-device', 'e1000e,bus=pb,addr=2',
	'-device', 'pci-bridge,id=pp,chassis_nr=9,addr=11', '-device', 'edu,bus=pp,addr=3');

sub events { my ($r, $ev) = @_; return grep { ($_->{event} // '') eq $ev } @{$r->{umsi}}; }

sub remapped_ok {
	my ($r, $tag) = @_;
	is($r->{exit}, 'held', "$tag: set-up completed and held") or diag($r->{serial});
	like($r->{serial}, qr/^ivrs: IVHD type 0x10 iommu [0-9a-f:.]+ base 0xfed80000 segment 0, \d+ device entries, ioapic devid 0xa0$/m,
	     "$tag: the IVRS table's IOMMU and the IO-APIC's DeviceID");
	like($r->{serial}, qr/^remap: on \(umsi\.remap=auto\): amd-vi unit 0xfed80000, ioapic devid 0xa0$/m,
	     "$tag: umsi.remap=auto takes it");
	like($r->{serial}, qr/^remap: IO-APIC 0: GSIs 0-23, requester 0xa0$/m,
	     "$tag: uMSI's table of IO-APICs (umsi_amdvi_config.ioapics): GSIs 0-23 as DeviceID 0xa0");
	like($r->{serial}, qr/^amdvi: unit 0xfed80000 control 0x[0-9a-f]+: iommu on, command buffer on; device table 0x[0-9a-f]+, \d+ DeviceIDs$/m,
	     "$tag: the unit and its command buffer on, the device table in");
	is($r->{ready}{remap}, 'amd-vi', "$tag: ready line \"remap\":\"amd-vi\"");
	# The IOMMU as its IVHD describes it (umsi_amdvi_config.units): with
	# a bridge in the machine QEMU 7.2 lists its DeviceIDs one entry at a
	# time instead of "all", and every MSI/MSI-X function lies in them.
	my ($nr) = $r->{serial} =~ /^remap: uMSI takes the AMD-Vi back end: unit 0xfed80000, \d+ DeviceIDs, ioapic devid 0xa0, (\d+) device ranges$/m;
	ok(defined $nr && $nr > 0, "$tag: the IVHD's device entries handed over as DeviceID ranges")
		or diag(join "\n", grep { /^remap:/ } split /\n/, $r->{serial});
	my ($ranges, @outside) = UmsiCheck::ranges_and_outside($r, 'remap: devices');
	is(scalar @$ranges, $nr // -1, "$tag: each range printed");
	is("@outside", '', "$tag: every MSI/MSI-X function is among the IOMMU's DeviceIDs");
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
	# The IVRS alias ranges QEMU gives for the two bridges' secondary
	# buses: the PCIe-to-PCI bridge's as (bus, 0), the PCI-to-PCI
	# bridge's as the bridge itself. Every function in one has its
	# entries (checked through the monitor above) in the alias's table.
	my @alias = map { [hex($_->[0]), hex($_->[1]), hex($_->[2]), hex($_->[3]), hex($_->[4]), hex($_->[5]), hex($_->[6])] }
		map { [/^ivrs: alias ([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])\.\.([0-9a-f]{2}):([0-9a-f]{2})\.([0-7]) as 0x([0-9a-f]{4})$/] }
		grep { /^ivrs: alias / } @{$r->{lines}};
	ok(@alias >= 2, "$tag: the IVRS table's alias ranges (" . scalar(@alias) . ')');
	my @in = grep { ($_->{mode} // '') =~ /msi/ } @{$r->{devices}};
	my $checked = 0;
	for my $d (@in) {
		my (undef, $bus, $dev, $fn) = UmsiCheck::parse_bdf($d->{bdf});
		my $id = ($bus << 8) | ($dev << 3) | $fn;
		my ($a) = grep { $id >= (($_->[0] << 8) | ($_->[1] << 3) | $_->[2]) &&
				 $id <= (($_->[3] << 8) | ($_->[4] << 3) | $_->[5]) } @alias;
		next unless $a;
		$checked++;
		local $UmsiCheck::HW = $r->{monitor} // {};
		is(UmsiCheck::requester($d->{bdf}), $a->[6],
		   sprintf("$tag: $d->{bdf}'s entries are in DeviceID 0x%04x's table, its IVRS alias", $a->[6]));
	}
	is($checked, 3, "$tag: three functions behind the two bridges checked against the IVRS aliases");
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
	subtest "$accel amd-vi: edu, e1000e, nvme, xhci block, two behind a PCIe-to-PCI bridge, one behind a PCI-to-PCI bridge" => sub {
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

for my $accel (@accels) {
	subtest "$accel amd-vi: INTx through the IO-APIC's table, ended by a directed EOI" => sub {
		my $r = UmsiTest::run_checked(accel => $accel, smp => 4, timeout => 300,
			($accel eq 'kvm' ? (machine => 'q35,kernel-irqchip=split') : ()),
			devices => ['-device', 'amd-iommu,intremap=on', '-device', 'edu,addr=5',
				    '-device', 'edu,addr=6', '-device', 'pcie-root-port,id=rp1,chassis=1,addr=7',
				    '-device', 'edu,bus=rp1'],
			append => 'umsi.drivers=edu umsi.fire=100 umsi.migrate=100 pci_nomsi',
			name => "$accel amd-vi intx");
		is($r->{ready}{remap}, 'amd-vi', 'ready line "remap":"amd-vi"');
		my @e = grep { ($_->{driver} // '') eq 'edu' } @{$r->{devices}};
		is(scalar(grep { ($_->{mode} // '') eq 'intx' } @e), 3, 'three edus on INTx');
		is(scalar(grep { ($_->{vectors}[0]{irte} // 999) < 256 } @e), 3,
		   'each names an entry of the IO-APIC\'s table below 256 ("irte")');
		my $a = ($r->{monitor} // {})->{amdvi} // {};
		is($a->{ioapic_rid}, 0xa0, 'monitor: the IO-APIC\'s DeviceID 0xa0');
		ok(($a->{dte}{0xa0} // {})->{remaps}, 'monitor: its device table entry remaps (IV, IntCtl 10b)');
		my @f = events($r, 'fire');
		is(scalar(grep { $_->{ok} && !$_->{wrong_cpu} && $_->{received} == $_->{sent} && $_->{sent} >= 100 } @f), 3,
		   'each level line delivered and ended 100 times and more, on its CPU')
			or diag(explain(\@f));
		my @m = events($r, 'migrate');
		is(scalar(grep { $_->{ok} && !$_->{lost} && !$_->{errors} && $_->{moved} == 100 } @m), 3,
		   '100 moves a line under fire, nothing lost') or diag(explain(\@m));
	};
}

subtest 'tcg amd-vi: forged messages' => sub {
	plan skip_all => "$UmsiQemu::QEMU: edu has no dma_mask property"
		unless `$UmsiQemu::QEMU -device edu,help 2>&1` =~ /^\s*dma_mask=/m;
	my @devs = ('-device', 'amd-iommu,intremap=on', '-device', 'edu,addr=5,dma_mask=0xffffffff',
		    '-device', 'pcie-root-port,id=rp1,chassis=1,addr=7', '-device', 'e1000e,bus=rp1');
	my %f;
	for my $remap ('auto', 'off') {
		my $r = UmsiQemu::run(accel => 'tcg', smp => 2, timeout => 200, hold => 1, devices => \@devs,
			append => "umsi.drivers=edu,e1000e umsi.forge=1 umsi.remap=$remap");
		is($r->{exit}, 'held', "umsi.remap=$remap: set-up completed and held") or diag($r->{serial});
		$f{$remap} = { map { $_->{case} => $_ } events($r, 'forge') };
	}
	my $on = $f{auto};
	is_deeply([sort keys %$on], [sort qw(victim victim_msi compat unowned_index beyond_table)],
		  'five cases under AMD-Vi') or diag(explain($on));
	for my $c (qw(victim compat unowned_index beyond_table)) {
		my $x = $on->{$c} // {};
		ok(defined $x->{handled_delta} && !$x->{handled_delta} && !$x->{spurious_delta} && !$x->{irq_delta},
		   "$c: aborted by the unit: no handler, nothing spurious") or diag(explain($x));
	}
	my $vm = $on->{victim_msi} // {};
	ok(defined $vm->{irq_delta} && !$vm->{irq_delta} && !$vm->{spurious_delta},
	   'victim_msi: the e1000e\'s index in edu\'s own table: the e1000e\'s IRQ never runs')
		or diag(explain($vm));
	like(($on->{unowned_index} // {})->{target} // '', qr/^DeviceID 0x28 entry \d+ of \d+ \(RemapEn clear\)$/,
	     'unowned_index: an entry of edu\'s table (DeviceID 0x28)');
	my $v = $f{off}{victim} // {};
	ok(($v->{irq_delta} // 0) >= 1, 'umsi.remap=off: the same DMA write reaches the e1000e\'s IRQ (the window is reached)')
		or diag(explain($v));
};

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
