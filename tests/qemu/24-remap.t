#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# Interrupt remapping (issue 17): QEMU's intel-iommu with intremap=on
# (the first -device on q35; split irqchip under KVM). The kernel reads
# the DMAR table (one DRHD at 0xfed90000; QEMU 7.2 lists its scope
# instead of INCLUDE_PCI_ALL), gives the unit to uMSI's VT-d back end
# (umsi.remap=auto), and every message becomes a handle into the table the
# back end owns:
#   - edu (MSI), e1000e (MSI-X), nvme (MSI-X, managed), xhci (a 16-message
#     MSI block) behind root ports fire exactly, on the CPU uMSI chose;
#   - the monitor reads every MSI/MSI-X message back in the remappable
#     format, and the table entry it names (through the unit's IRTA) sends
#     the line's vector to the line's APIC ID and validates the function's
#     requester ID (UmsiCheck);
#   - INTx (pci_nomsi): remappable IO-APIC entries, level, EOIs matched
#     (not moved under fire: on 4 CPUs that loses events and can leave a
#     level line stuck with or without remapping, a known limitation);
#   - migration under fire rewrites entries, never messages: the MSI-X
#     table sees as many writes with 300 moves as with none (and many
#     more with umsi.remap=off);
#   - umsi.remap=off on the same machine is today's compatibility format;
#     umsi.remap=on without an IOMMU says why and stays off.
# QEMU 7.2 records no interrupt-remapping faults (it drops the message);
# no ir_fault line may appear anyway.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempfile tempdir);
use Test::More;
use UmsiCheck;
use UmsiQemu;
use UmsiTest;

UmsiTest::require_library();
plan skip_all => "$UmsiQemu::QEMU has no intel-iommu device"
	unless `$UmsiQemu::QEMU -device help 2>&1` =~ /"intel-iommu"/;

my ($fh, $img) = tempfile('umsi-nvme-XXXXXX', TMPDIR => 1, UNLINK => 1, SUFFIX => '.img');
binmode($fh);
print $fh pack('a4 V x504', 'UMSI', $_) for 0 .. 255;
close($fh);

my @iommu = ('-device', 'intel-iommu,intremap=on');
my @zoo = (@iommu,
	'-device', 'edu,addr=5',
	'-device', 'pcie-root-port,id=rp1,chassis=1,addr=7', '-device', 'e1000e,bus=rp1',
	'-device', 'pcie-root-port,id=rp2,chassis=2,addr=8',
	'-drive', "if=none,id=d0,file=$img,format=raw",
	'-device', 'nvme,serial=umsi,drive=d0,bus=rp2',
	'-device', 'pcie-root-port,id=rp3,chassis=3,addr=9',
	'-device', 'nec-usb-xhci,msi=on,msix=off,bus=rp3',
	'-device', 'pcie-root-port,id=rp4,chassis=4,addr=10', '-device', 'edu,bus=rp4');

sub events { my ($r, $ev) = @_; return grep { ($_->{event} // '') eq $ev } @{$r->{umsi}}; }

sub msg_vectors {
	my ($r) = @_;
	return map { my $d = $_; map { [$d, $_] } @{$d->{vectors} // []} }
		grep { ($_->{mode} // '') =~ /^msix?$/ } @{$r->{devices}};
}

# The checks every remapped run shares.
sub remapped_ok {
	my ($r, $tag) = @_;
	like($r->{serial}, qr/^dmar: DRHD 0xfed90000 segment 0 flags 0x[0-9a-f]+.* ioapic 0 sid 0x[0-9a-f]{4} intr_remap 1 x2apic_opt_out 0$/m,
	     "$tag: DMAR: the DRHD at 0xfed90000, its IO-APIC's source ID, INTR_REMAP");
	like($r->{serial}, qr/^remap: on \(umsi\.remap=\w+\): unit 0xfed90000/m,
	     "$tag: the unit is given to uMSI");
	my ($sid) = $r->{serial} =~ /^dmar: DRHD .* ioapic 0 sid (0x[0-9a-f]{4}) /m;
	$sid = hex($sid // 0);
	like($r->{serial}, qr/^remap: IO-APIC 0: GSIs 0-23, requester ${\ sprintf('0x%x', $sid)}$/m,
	     "$tag: uMSI's table of IO-APICs (umsi_vtd_config.ioapics): GSIs 0-23 with the DMAR's source ID");
	like($r->{serial}, qr/^umsi info: x86-vtd: .*table at 0x/m, "$tag: the back end says where its table is");
	# The unit as the DMAR scope says (umsi_vtd_config.units): QEMU 7.2
	# lists the root bus's functions and bridges, not INCLUDE_PCI_ALL,
	# and every function uMSI serves lies in one of the ranges given.
	my ($nscope) = $r->{serial} =~ /^remap: uMSI takes the VT-d back end: unit 0xfed90000, x?apic, ioapic sid 0x[0-9a-f]+, (\d+) scope ranges$/m;
	ok(defined $nscope && $nscope > 0, "$tag: the unit's device scope handed over as requester ranges, not include-all")
		or diag(join "\n", grep { /^remap:/ } split /\n/, $r->{serial});
	my ($ranges, @outside) = UmsiCheck::ranges_and_outside($r, 'remap: scope');
	is(scalar @$ranges, $nscope // -1, "$tag: each range printed");
	is("@outside", '', "$tag: every MSI/MSI-X function is in the unit's scope");
	is($r->{ready}{remap}, 'vt-d', "$tag: ready line \"remap\":\"vt-d\"");
	my @v = msg_vectors($r);
	ok(@v, "$tag: message vectors listed");
	is(scalar(grep { !defined $_->[1]{irte} } @v), 0, "$tag: every message vector names its entry (irte)");
	my %seen;
	my @dup = grep { $seen{$_->[1]{irte} // -1}++ } @v;
	is(scalar @dup, 0, "$tag: no entry named by two messages");
	is(scalar(events($r, 'ir_fault')) + scalar(events($r, 'dma_fault')), 0,
	   "$tag: no remapping fault recorded");
	unlike($r->{qemu_out} // '', qr/vtd|IRTE|remap/i, "$tag: QEMU reported no remapping error")
		or diag($r->{qemu_out});
}

sub fires_ok {
	my ($r, $tag, @drivers) = @_;
	my @f = events($r, 'fire');
	for my $drv (@drivers) {
		ok(scalar(grep { $_->{driver} eq $drv } @f), "$tag: $drv fired");
	}
	is(scalar(grep { !$_->{ok} } @f), 0, "$tag: every vector fired exactly, on the CPU uMSI chose")
		or diag(join("\n", map { JSON::PP::encode_json($_) } grep { !$_->{ok} } @f));
}

my $kvm = UmsiQemu::kvm_status();
for my $accel ('tcg', 'kvm') {
    SKIP: {
		if ($accel eq 'kvm' && $kvm ne 'yes') {
			UmsiQemu::skip_kvm(1);
			last SKIP;
		}
		subtest "$accel remap: edu, e1000e, nvme, xhci block" => sub {
			my $r = UmsiTest::run_checked(accel => $accel, smp => 4,
				machine => $accel eq 'kvm' ? 'q35,kernel-irqchip=split' : 'q35',
				devices => \@zoo, timeout => 120,
				append => 'umsi.drivers=all umsi.fire=20 umsi.probe_max=16',
				name => "$accel remap");
			remapped_ok($r, "$accel remap");
			fires_ok($r, "$accel remap", qw(edu e1000e nvme xhci));
			my ($x) = UmsiTest::devices_by_id($r, '0x1033', '0x0194');
			is(($x // {})->{mode}, 'msi', 'xhci in MSI mode');
			is(scalar @{($x // {})->{vectors} // []}, 16, 'xhci: a 16-message block, each message its own entry');
			my %xcpu = map { ($_->{cpu} // -1) => 1 } @{($x // {})->{vectors} // []};
			ok(keys(%xcpu) >= 2, 'xhci: the block\'s messages spread over ' .
			   scalar(keys %xcpu) . ' CPUs (each message its own CPU)');
			my ($n) = UmsiTest::devices_by_id($r, '0x1b36', '0x0010');
			is(($n // {})->{mode}, 'msix', 'nvme in MSI-X mode');
			# The checker sees a wrong entry number, CPU or vector.
			for my $bad (['irte', 1], ['apic_id', 1], ['vector', 1]) {
				my ($k, $delta) = @$bad;
				my $devs = JSON::PP::decode_json(JSON::PP::encode_json($r->{devices}));
				my ($d) = grep { ($_->{mode} // '') eq 'msix' } @$devs;
				$d->{vectors}[0]{$k} += $delta;
				my @res = UmsiCheck::check($r->{monitor}, { devices => $devs, lines => [] });
				ok(scalar(grep { !$_->[0] && $_->[1] =~ /\Q$d->{bdf}\E/ } @res),
				   "the checker catches a wrong $k in $d->{bdf}'s line");
			}
		};
	}
}

# Migration under fire: the e1000e's MSI-X table is written at set-up and
# never again, however often its IRQ moves; without remapping every move
# writes it.
my $dir = tempdir('umsi-remap-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my @nic = ('-device', 'pcie-root-port,id=rp1,chassis=1,addr=7', '-device', 'e1000e,bus=rp1',
	   '-device', 'edu,addr=5');
my %writes;
for my $c (['on', 0], ['on', 300], ['off', 300]) {
	my ($remap, $moves) = @$c;
	my $trace = "$dir/trace-$remap-$moves";
	subtest "tcg remap=$remap, $moves moves under fire" => sub {
		my $r = UmsiTest::run_checked(smp => 4, timeout => 120,
			devices => [($remap eq 'on' ? @iommu : ()), @nic,
				    UmsiQemu::msix_trace_args($trace)],
			append => "umsi.drivers=e1000e,edu umsi.fire=20 umsi.remap=$remap" .
				  ($moves ? " umsi.migrate=$moves" : ''),
			name => "remap=$remap migrate=$moves");
		remapped_ok($r, "remap=$remap migrate=$moves") if $remap eq 'on';
		fires_ok($r, "remap=$remap migrate=$moves", qw(edu e1000e));
		if ($moves) {
			my @m = events($r, 'migrate');
			is(scalar @m, 2, 'e1000e and edu migrated');
			is(scalar(grep { $_->{ok} && $_->{moved} == $moves } @m), 2,
			   "$moves moves each, every event delivered exactly once")
				or diag(join("\n", map { JSON::PP::encode_json($_) } @m));
		}
		$writes{"$remap-$moves"} = UmsiQemu::msix_trace_count($trace, 'e1000e')->{writes};
		ok($writes{"$remap-$moves"} > 0, "MSI-X table writes traced ($writes{\"$remap-$moves\"})");
	};
}
is($writes{'on-300'}, $writes{'on-0'},
   "remapping: 300 moves write the MSI-X table no more than none ($writes{'on-0'} writes)");
cmp_ok($writes{'off-300'}, '>', $writes{'on-0'} + 300,
       "without remapping every move rewrites the message ($writes{'off-300'} writes)");

subtest 'tcg remap: INTx through remappable IO-APIC entries' => sub {
	my $r = UmsiTest::run_checked(smp => 4,
		devices => [@iommu, '-device', 'edu,addr=5', '-device', 'edu,addr=6',
			    '-device', 'pcie-root-port,id=rp1,chassis=1,addr=7', '-device', 'edu,bus=rp1'],
		append => 'umsi.drivers=edu umsi.fire=100 pci_nomsi',
		name => 'remap intx');
	is($r->{ready}{remap}, 'vt-d', 'ready line "remap":"vt-d"');
	my @e = grep { ($_->{driver} // '') eq 'edu' } @{$r->{devices}};
	is(scalar(grep { ($_->{mode} // '') eq 'intx' } @e), 3, 'three edus on INTx');
	is(scalar(grep { defined $_->{vectors}[0]{irte} } @e), 3, 'each INTx names its entry');
	fires_ok($r, 'remap intx', 'edu');
	is(scalar(grep { $_->{received} == 100 } events($r, 'fire')), 3,
	   'each level INTx delivered and ended 100 times');
	is(scalar(events($r, 'ir_fault')), 0, 'no remapping fault recorded');
};

# APIC IDs above 255 through remapping alone (KVM only; issue 17 point 3):
# CPUs at APIC IDs 223 and 259 as in 16-x2apic-extdest.t, but KVM does
# not advertise the extended destination ID (kvm-msi-ext-dest-id=off), so
# only an x2APIC-mode table entry (eim=on) can name 259. Written against
# the documented options; this machine has no /dev/kvm, so it has not run
# here.
SKIP: {
	if ($kvm ne 'yes') {
		UmsiQemu::skip_kvm(1);
		last SKIP;
	}
	subtest 'kvm remap, eim=on: APIC ID 259 without the extended destination ID' => sub {
		my $cpu = 'host-x86_64-cpu,kvm-msi-ext-dest-id=off';
		my $r = UmsiTest::run_checked(accel => 'kvm',
			machine => 'q35,kernel-irqchip=split',
			cpu => 'host,kvm-msi-ext-dest-id=off',
			smp => '1,sockets=3,cores=96,threads=1,maxcpus=288',
			devices => ['-device', 'intel-iommu,intremap=on,eim=on',
				    '-device', "$cpu,socket-id=1,core-id=95,thread-id=0",
				    '-device', "$cpu,socket-id=2,core-id=3,thread-id=0",
				    '-device', 'e1000e,addr=2', '-device', 'edu,addr=3'],
			append => 'umsi.apic=x2apic umsi.drivers=all umsi.fire=50 umsi.migrate=200',
			name => 'kvm remap eim');
		is_deeply([map { $_->{apic_id} } @{$r->{ready}{cpus} // []}], [0, 223, 259],
			  'CPUs with APIC IDs 0, 223, 259');
		is($r->{ready}{remap}, 'vt-d', 'remapping on ("remap":"vt-d")');
		my @v = map { @{$_->{vectors} // []} } @{$r->{devices}};
		ok(scalar(grep { ($_->{apic_id} // -1) == 259 && defined $_->{irte} } @v),
		   'a vector targets APIC ID 259 through its table entry');
		my @f = events($r, 'fire');
		is(scalar(grep { !$_->{ok} } @f), 0, 'every vector fired exactly, on its CPU');
		ok(scalar(grep { $_->{cpu} == 2 && $_->{ok} } @f),
		   'interrupts arrived on the CPU with APIC ID 259');
		is(scalar(grep { $_->{ok} } events($r, 'migrate')), 2,
		   'both IRQs migrated under fire without loss');
	};
}

subtest 'tcg remap: INTx moved under fire' => sub {
	my $r = UmsiTest::run_checked(smp => 4,
		devices => [@iommu, '-device', 'edu,addr=6', '-device', 'edu,addr=7'],
		append => 'umsi.drivers=edu umsi.migrate=300 pci_nomsi',
		name => 'remap intx migrate');
	my @m = events($r, 'migrate');
	is(scalar @m, 2, 'two INTx lines migrated');
	for my $m (@m) {
		ok($m->{ok} && !$m->{lost} && $m->{moved} == 300 && $m->{received} == $m->{sent},
		   "$m->{bdf}: 300 moves through remappable entries, $m->{sent} events, none late or lost")
			or diag(JSON::PP::encode_json($m));
		cmp_ok($m->{not_mine}, '<=', 300, "$m->{bdf}: at most one stray call a move ($m->{not_mine})");
	}
};

subtest 'tcg umsi.remap=off with the IOMMU: as today' => sub {
	my $r = UmsiTest::run_checked(smp => 4, devices => \@zoo, timeout => 120,
		append => 'umsi.drivers=all umsi.fire=20 umsi.probe_max=16 umsi.remap=off',
		name => 'remap off');
	like($r->{serial}, qr/^remap: off \(umsi\.remap=off\)$/m, 'remapping off, as asked');
	is($r->{ready}{remap}, JSON::PP::false, 'ready line remap:false');
	my @v = msg_vectors($r);
	is(scalar(grep { defined $_->[1]{irte} } @v), 0, 'no vector names an entry');
	fires_ok($r, 'remap off', qw(edu e1000e nvme xhci));
};

subtest 'tcg umsi.remap=on without an IOMMU' => sub {
	my $r = UmsiTest::run_checked(smp => 2, devices => ['-device', 'edu,addr=5'],
		append => 'umsi.drivers=edu umsi.fire=20 umsi.remap=on', name => 'remap on, no iommu');
	like($r->{serial}, qr/^remap: error: umsi\.remap=on, but no DMAR table; remapping stays off$/m,
	     'a clear error line');
	is($r->{ready}{remap}, JSON::PP::false, 'ready line remap:false');
	fires_ok($r, 'no iommu', 'edu');
};

done_testing();
