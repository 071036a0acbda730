# SPDX-License-Identifier: MIT
#
# UmsiCheck - compare what the kernel reported with the real device state,
# read through QEMU's HMP monitor and decoded here, independently of the
# kernel and the library:
#   - the ECAM window's address from `info mtree` (pcie-mmcfg-mmio);
#   - each function's configuration space with `xp` over ECAM;
#   - BARs decoded from that configuration space;
#   - the MSI-X table with `xp` over the BAR the capability names;
#   - IO-APIC redirection entries from `info pic` (for INTx lines).
#
# Messages are decoded by architecture, told by the kernel's ready line:
#   - x86-64: address 0xfeeXXXXX with the destination APIC ID in bits
#     19:12 (and 11:5, extended), vector in data bits 7:0; the line names
#     the CPU by "apic_id";
#   - x86-64 under interrupt remapping (the ready line's "remap":true):
#     address bit 4 set is the remappable format (VT-d 5.1.5.2): the
#     interrupt handle in bits 19:5 and 2 (bit 15), SHV in bit 3, then the
#     data is a subhandle added to it (a block's message i: data | i). The
#     table entry (IRTE) it names is read through the monitor from the
#     table the unit's IRTA register points at (the unit's base from the
#     kernel's "remap: on" line) and decoded here (9.10): P bit 0, trigger
#     bit 4, vector 23:16, destination 63:32 (xAPIC: APIC ID in 47:40), and
#     in the high half SID 15:0, SQ 17:16, SVT 19:18. The entry must be
#     present, send the line's vector to the line's APIC ID, validate the
#     function's requester ID (the IO-APIC's for wired inputs, from the
#     DMAR line), and be the line's "irte". A remappable IO-APIC entry
#     (bit 48) carries the handle in 63:49 and 11, its vector in 7:0;
#   - riscv64 (AIA IMSIC): the address is a hart's S-level interrupt file,
#     one of the "file" addresses of the ready line, and the data the
#     identity; the line names the CPU by "hart". The ECAM window is the
#     `pcie-ecam` alias of QEMU virt.
#   - arm64 (GICv3 ITS): every message goes to GITS_TRANSLATER (the ready
#     line's "translater") with data = the EventID (the line's "event_id";
#     message i of an MSI block: data | i). The message names no CPU and
#     no LPI: the (DeviceID, EventID) -> (LPI, collection) mapping lives in
#     the ITS's tables, not in config space, so it is not checked here
#     (tests read QEMU's MAPTI trace for it); what is checked is the
#     address, the EventID, no (DeviceID, EventID) twice, and from the
#     device lines no LPI (first_lpi + vector, the global identity) twice
#     or outside uMSI's range.
#
# The requester ID the root sees (an ITS's DeviceID, VT-d's source ID) is
# worked out here from the bridges' configuration space, as the PCI
# Express to PCI/PCI-X Bridge specification (2.3) and QEMU's
# pci_req_id_cache_get() have it: walking up from the function, a PCI
# Express to PCI bridge forwards as (its secondary bus, devfn 0), a
# conventional PCI-to-PCI bridge as itself, PCI Express ports and switches
# leave it; the last bridge on the way decides (requester()).
#
#   my $hw = UmsiCheck::snapshot($mon, $serial_text);   # in the callback
#   my @results = UmsiCheck::check($hw, $run_result);   # [ok, name, diag]
package UmsiCheck;

use strict;
use warnings;
no warnings 'portable';	# 64-bit hex addresses
use JSON::PP;

# The architecture the messages are decoded for, and under remapping the
# unit and its entries (set by check()).
our $HW = {};
# The requester whose messages check_device() is decoding (AMD-Vi finds a
# message's table by it).
our $CUR_RID;

sub parse_bdf {
	my ($s) = @_;
	my ($seg, $bus, $dev, $fn) =
		$s =~ /^(?:([0-9a-f]{4}):)?([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$/i
		or return;
	return (hex($seg // 0), hex($bus), hex($dev), $fn);
}

sub ecam_base {
	my ($mon) = @_;
	my $mt = $mon->cmd('info mtree');
	# QEMU virt (riscv64, arm64) maps the window through an alias.
	my ($a) = $mt =~ /([0-9a-f]+)-[0-9a-f]+ \(prio [-\d]+, i\/o\): alias pcie-ecam \@pcie-mmcfg-mmio/;
	($a) = $mt =~ /([0-9a-f]+)-[0-9a-f]+ \(prio [-\d]+, i\/o\): pcie-mmcfg-mmio/
		unless defined $a;
	return defined $a ? hex($a) : undef;
}

# The architecture and, on riscv64, each hart's interrupt file, from the
# kernel's ready line in @text.
sub arch_of {
	my ($text) = @_;
	my ($line) = $text =~ /^UMSI (\{"event":"ready".*\})\s*$/m;
	my $ready = $line ? eval { decode_json($line) } : undef;
	my $arch = ($ready && $ready->{arch}) // 'x86_64';
	my %files;
	if ($arch eq 'arm64' && ($ready->{ctl} // '') eq 'gicv2m') {
		my $v = $ready->{v2m} // {};
		return ($arch, {}, { v2m => 1, setspi => hex($v->{setspi} // '0'),
				     first_spi => $v->{first_spi} // 0,
				     spis => $v->{spis} // 0,
				     dist => hex(($ready->{gic} // {})->{dist} // '0'),
				     ncpus => scalar @{$ready->{cpus} // []} });
	}
	if ($arch eq 'arm64') {
		return ($arch, {}, { translater => hex($ready->{translater} // '0'),
				     first_lpi => $ready->{first_lpi} // 0,
				     nvec => $ready->{nvec} // 0,
				     ncpus => scalar @{$ready->{cpus} // []} });
	}
	if ($arch eq 'riscv64') {
		for my $c (@{$ready->{cpus} // []}) {
			$files{hex($c->{file})} = $c->{hart} if $c->{file} && hex($c->{file});
		}
		return ($arch, \%files, { aplic => hex($ready->{aplic} // '0'),
					   imsic => hex($ready->{imsic} // '0') });
	}
	return ($arch, \%files);
}

sub b8 { my ($w, $o) = @_; return ($w->[$o >> 2] >> (8 * ($o & 3))) & 0xff; }
sub b16 { my ($w, $o) = @_; return b8($w, $o) | (b8($w, $o + 1) << 8); }
sub b32 { my ($w, $o) = @_; return $w->[$o >> 2]; }

# Decode one function's first 256 bytes of configuration space.
sub decode_function {
	my ($mon, $w) = @_;
	my %f = (vendor => b16($w, 0), device => b16($w, 2),
		 command => b16($w, 4), status => b16($w, 6),
		 header => b8($w, 0x0e) & 0x7f, pin => b8($w, 0x3d));
	my $nbars = $f{header} == 0 ? 6 : $f{header} == 1 ? 2 : 0;
	my @bars;
	for (my $i = 0; $i < $nbars; $i++) {
		my $v = b32($w, 0x10 + 4 * $i);
		if ($v & 1) {
			$bars[$i] = { kind => 'io', addr => $v & ~3 };
		} elsif ((($v >> 1) & 3) == 2 && $i < 5) {
			$bars[$i] = { kind => 'mem64',
				      addr => ($v & ~0xf) + b32($w, 0x14 + 4 * $i) * 2**32 };
			$i++;
		} else {
			$bars[$i] = { kind => 'mem32', addr => $v & ~0xf };
		}
	}
	$f{bars} = \@bars;
	$f{secondary} = b8($w, 0x19) if $f{header} == 1;
	return \%f unless $f{status} & 0x10;
	my $ptr = b8($w, 0x34);
	for (my $n = 0; $n < 48 && $ptr >= 0x40; $n++) {
		$ptr &= 0xfc;
		my $id = b8($w, $ptr);
		if ($id == 0x05 && !$f{msi}) {
			my $ctl = b16($w, $ptr + 2);
			my $is64 = ($ctl >> 7) & 1;
			my $m = { cap => $ptr, ctl => $ctl, enable => $ctl & 1,
				  mmc => ($ctl >> 1) & 7, mme => ($ctl >> 4) & 7,
				  is64 => $is64, pvm => ($ctl >> 8) & 1,
				  addr => b32($w, $ptr + 4) +
					  ($is64 ? b32($w, $ptr + 8) * 2**32 : 0),
				  data => b16($w, $ptr + ($is64 ? 12 : 8)) };
			$m->{mask} = b32($w, $ptr + ($is64 ? 16 : 12)) if $m->{pvm};
			$f{msi} = $m;
		} elsif ($id == 0x10 && !defined $f{pcie_type}) {
			$f{pcie_type} = (b16($w, $ptr + 2) >> 4) & 0xf;
		} elsif ($id == 0x11 && !$f{msix}) {
			my $ctl = b16($w, $ptr + 2);
			my $t = b32($w, $ptr + 4);
			$f{msix} = { cap => $ptr, ctl => $ctl,
				     size => ($ctl & 0x7ff) + 1,
				     fmask => ($ctl >> 14) & 1,
				     enable => ($ctl >> 15) & 1,
				     bir => $t & 7, offset => $t & ~7 };
		}
		$ptr = b8($w, $ptr + 1);
	}
	read_msix_table($mon, \%f);
	return \%f;
}

# The MSI-X table of $f, through the BAR its capability names (when that
# BAR is memory and has an address), decoded entry by entry.
sub read_msix_table {
	my ($mon, $f) = @_;
	my $x = $f->{msix} or return;
	my $bar = $f->{bars}[$x->{bir}];
	return unless $bar && $bar->{kind} ne 'io' && $bar->{addr};
	$x->{table_addr} = $bar->{addr} + $x->{offset};
	my @t = $mon->read32($x->{table_addr}, 4 * $x->{size});
	$x->{entries} = [map {
		{ addr => $t[4 * $_] + $t[4 * $_ + 1] * 2**32,
		  data => $t[4 * $_ + 2],
		  masked => $t[4 * $_ + 3] & 1 }
	} 0 .. $x->{size} - 1];
}

# An SR-IOV VF reads 0xffff as Vendor and Device ID and 0 in its BARs
# (SR-IOV 3.4.1): what it is and where its BARs are come from its PF.
# The PF is the function whose SR-IOV capability (read here from its
# extended configuration space) puts a VF at this address: the one the
# device line names as "pf" is only where to look. Its vendor is the
# PF's, its device ID the capability's VF Device ID, and its BAR n is the
# PF's VF BAR n plus its number times one VF's size (the VF's BAR as
# QEMU's `info pci` shows it, checked against that). Then the MSI-X table
# is read as for any function; $f->{vf} records what was found.
sub vf_identity {
	my ($mon, $ecam, $text, $bdf, $f, $w) = @_;
	my ($pfbdf) = $text =~ /^UMSI \{"event":"device","bdf":"\Q$bdf\E"[^\n]*"pf":"([0-9a-f:.]+)"/m;
	return unless $pfbdf;
	my (undef, $pb, $pd, $pf) = parse_bdf($pfbdf);
	my $base = $ecam + ($pb << 20) + ($pd << 15) + ($pf << 12);
	my @x = $mon->read32($base, 1024);
	return unless @x == 1024;
	my $off = 0x100;
	for (my $n = 0; $n < 960 && $off >= 0x100; $n++) {
		my $h = $x[$off >> 2];
		last if !$h || $h == 0xffffffff;
		last if ($h & 0xffff) == 0x0010;
		$off = ($h >> 20) & 0xffc;
	}
	return unless $off >= 0x100 && ($x[$off >> 2] & 0xffff) == 0x0010;
	my $ctrl = b16(\@x, $off + 0x08);
	my $numvfs = b16(\@x, $off + 0x10);
	my $first = b16(\@x, $off + 0x14);
	my $stride = b16(\@x, $off + 0x16);
	my (undef, $b, $d, $fn) = parse_bdf($bdf);
	my $rid = ($b << 8) | ($d << 3) | $fn;
	my $pfrid = ($pb << 8) | ($pd << 3) | $pf;
	my $idx;
	for my $i (0 .. $numvfs - 1) {
		$idx = $i, last if $pfrid + $first + $i * $stride == $rid;
	}
	return unless defined $idx && ($ctrl & 1);
	my $info = $mon->cmd('info pci');
	my ($block) = $info =~ /Bus\s+$b, device\s+$d, function $fn:\n(.*?)(?=\n\s*Bus\s|\z)/s;
	$f->{vendor} = b16(\@x, 0);
	$f->{device} = b16(\@x, $off + 0x1a);
	$f->{vf} = { pf => $pfbdf, index => $idx, bars_ok => 1 };
	my @bars;
	for (my $i = 0; $i < 6; $i++) {
		my $v = b32(\@x, $off + 0x24 + 4 * $i);
		next unless $v;
		my $is64 = (($v >> 1) & 3) == 2 && $i < 5;
		my $addr = ($v & ~0xf) + ($is64 ? b32(\@x, $off + 0x28 + 4 * $i) * 2**32 : 0);
		my ($lo, $hi) = ($block // '') =~ /BAR$i: (?:64|32) bit (?:prefetchable )?memory at 0x([0-9a-f]+) \[0x([0-9a-f]+)\]/;
		if (defined $lo) {
			my $size = hex($hi) - hex($lo) + 1;
			$bars[$i] = { kind => $is64 ? 'mem64' : 'mem32', addr => $addr + $idx * $size };
			$f->{vf}{bars_ok} = 0 if $bars[$i]{addr} != hex($lo);
		}
		$i++ if $is64;
	}
	$f->{bars} = \@bars;
	read_msix_table($mon, $f);
}

# Read every function the kernel mentioned (UMSI lines and "pci" lines).
sub snapshot {
	my ($mon, $text) = @_;
	my $ecam = ecam_base($mon);
	return { error => 'no pcie-mmcfg-mmio in info mtree' } unless defined $ecam;
	my %bdfs;
	for my $l (split(/\n/, $text)) {
		$bdfs{lc $1} = 1 if $l =~ /^UMSI .*"bdf":"([0-9a-f:.]+)"/i;
		$bdfs{lc $1} = 1 if $l =~ /^pci ([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) /;
	}
	my %fn;
	for my $bdf (sort keys %bdfs) {
		my ($seg, $bus, $dev, $f) = parse_bdf($bdf) or next;
		next if $seg;
		my @w = $mon->read32($ecam + ($bus << 20) + ($dev << 15) + ($f << 12), 64);
		next unless @w == 64;
		$fn{$bdf} = decode_function($mon, \@w);
		vf_identity($mon, $ecam, $text, $bdf, $fn{$bdf}, \@w)
			if $fn{$bdf}{vendor} == 0xffff && $w[2] != 0xffffffff;
	}
	my ($arch, $files, $its) = arch_of($text);
	my $hw = { ecam => $ecam, functions => \%fn, arch => $arch, files => $files,
		   its => $its,
		   ioapic => $arch eq 'x86_64' ? ioapic_entries($mon) : {} };
	remap_snapshot($mon, $text, $hw) if $arch eq 'x86_64';
	aplic_snapshot($mon, $text, $hw) if $arch eq 'riscv64';
	gicd_intx_snapshot($mon, $text, $hw) if $arch eq 'arm64' && !($its // {})->{v2m};
	return $hw;
}

# arm64 on a GICv3: the distributor's registers for each INTx SPI the
# device lines name (GICD_IROUTER, the enable and configuration bits):
# $hw->{gicd_intx}{INTID}. QEMU's GICv3 answers the monitor (its GICv2
# does not: gicv2_trace()).
sub gicd_intx_snapshot {
	my ($mon, $text, $hw) = @_;
	my $dist = 0x08000000;
	my %gsi;
	for my $l ($text =~ /^UMSI (\{"event":"device".*\})\s*$/mg) {
		my $d = eval { decode_json($l) } or next;
		next unless ($d->{mode} // '') eq 'intx';
		$gsi{$_->{gsi}} = 1 for grep { defined $_->{gsi} } @{$d->{vectors} // []};
	}
	for my $g (keys %gsi) {
		next unless $g >= 32 && $g < 1020;
		my ($lo, $hi) = $mon->read32($dist + 0x6000 + 8 * $g, 2);
		my ($en) = $mon->read32($dist + 0x100 + 4 * int($g / 32), 1);
		my ($cfg) = $mon->read32($dist + 0xc00 + 4 * int($g / 16), 1);
		$hw->{gicd_intx}{$g} = {
			aff => (($lo // 0) & 0xffffff) | ((($hi // 0) & 0xff) << 24),
			irm => (($lo // 0) >> 31) & 1,
			enabled => (($en // 0) >> ($g % 32)) & 1,
			edge => (($cfg // 0) >> (2 * ($g % 16) + 1)) & 1 };
	}
}

# riscv64: the S-level APLIC's registers for each INTx source the device
# lines name (sourcecfg, target, the enable bit): $hw->{aplic}{GSI}.
sub aplic_snapshot {
	my ($mon, $text, $hw) = @_;
	my $base = ($hw->{its} // {})->{aplic} or return;
	my %gsi;
	for my $l ($text =~ /^UMSI (\{"event":"device".*\})\s*$/mg) {
		my $d = eval { decode_json($l) } or next;
		next unless ($d->{mode} // '') eq 'intx';
		$gsi{$_->{gsi}} = 1 for grep { defined $_->{gsi} } @{$d->{vectors} // []};
	}
	for my $g (keys %gsi) {
		next unless $g >= 1 && $g < 1024;
		my ($cfg) = $mon->read32($base + 0x4 + 4 * ($g - 1), 1);
		my ($tgt) = $mon->read32($base + 0x3004 + 4 * ($g - 1), 1);
		my ($ie) = $mon->read32($base + 0x1e00 + 4 * int($g / 32), 1);
		$hw->{aplic}{$g} = { sm => ($cfg // 0) & 7, hart_index => ($tgt // 0) >> 18,
				      eiid => ($tgt // 0) & 0x7ff,
				      enabled => (($ie // 0) >> ($g % 32)) & 1 };
	}
}

# The remapping unit and the table entries the messages and IO-APIC
# entries of $hw name, when the ready line says "remap":true.
sub remap_snapshot {
	my ($mon, $text, $hw) = @_;
	my ($line) = $text =~ /^UMSI (\{"event":"ready".*\})\s*$/m;
	my $ready = $line ? eval { decode_json($line) } : undef;
	return unless $ready && $ready->{remap};
	return amdvi_snapshot($mon, $text, $hw) if $ready->{remap} eq 'amd-vi';
	my ($base) = $text =~ /^remap: on \(umsi\.remap=[\w-]+\): unit 0x([0-9a-f]+)/m;
	my ($iosid) = $text =~ /^dmar: DRHD 0x[0-9a-f]+ .* ioapic \d+ sid 0x([0-9a-f]+)/m;
	my $r = $hw->{remap} = { on => 1, ioapic_sid => defined $iosid ? hex($iosid) : undef };
	if (!defined $base) {
		$r->{error} = 'no "remap: on" line naming the unit';
		return;
	}
	$r->{base} = hex($base);
	my ($gsts) = $mon->read32($r->{base} + 0x1c, 1);
	my ($lo, $hi) = $mon->read32($r->{base} + 0xb8, 2);
	$r->{gsts} = $gsts // 0;
	$r->{table} = (($lo // 0) & ~0xfff) + ($hi // 0) * 2**32;
	$r->{size} = 2 << (($lo // 0) & 0xf);
	$r->{eime} = (($lo // 0) >> 11) & 1;
	my %want;
	for my $f (values %{$hw->{functions}}) {
		if (my $x = $f->{msix}) {
			for my $e (@{$x->{entries} // []}) {
				next if $e->{masked} || !remappable($e->{addr});
				my $i = remap_index($e->{addr}, $e->{data});
				$want{$i} = 1;
			}
		}
		if (my $m = $f->{msi}) {
			next unless $m->{enable} && remappable($m->{addr});
			for my $k (0 .. (1 << $m->{mme}) - 1) {
				$want{remap_index($m->{addr}, $m->{data} | $k)} = 1;
			}
		}
	}
	for my $e (values %{$hw->{ioapic}}) {
		$want{$e->{handle}} = 1 if $e->{remap};
	}
	for my $i (sort { $a <=> $b } keys %want) {
		next if $i >= $r->{size};
		my @w = $mon->read32($r->{table} + 16 * $i, 4);
		next unless @w == 4;
		$r->{irte}{$i} = { present => $w[0] & 1, level => ($w[0] >> 4) & 1,
				   vector => ($w[0] >> 16) & 0xff,
				   dest => $r->{eime} ? $w[1] : ($w[1] >> 8) & 0xff,
				   sid => $w[2] & 0xffff, sq => ($w[2] >> 16) & 3,
				   svt => ($w[2] >> 18) & 3 };
	}
}

# The requester ID the root sees on writes of function $bdf (see the top
# of this file), from the bridges read in $HW; undef if $bdf is unknown.
sub requester {
	my ($bdf) = @_;
	my (undef, $bus, $dev, $fn) = parse_bdf($bdf);
	return undef unless defined $fn;
	my $rid = ($bus << 8) | ($dev << 3) | $fn;
	my $fns = $HW->{functions} // {};
	for (my $depth = 0; $depth < 256; $depth++) {
		my ($up) = grep { $fns->{$_}{header} == 1 &&
				  ($fns->{$_}{secondary} // -1) == $bus } sort keys %$fns;
		last unless defined $up;
		my $b = $fns->{$up};
		my (undef, $ubus, $udev, $ufn) = parse_bdf($up);
		if (!defined $b->{pcie_type}) {
			$rid = ($ubus << 8) | ($udev << 3) | $ufn;
		} elsif ($b->{pcie_type} == 7) {
			$rid = $bus << 8;
		} elsif ($b->{pcie_type} == 8) {
			$rid = ($ubus << 8) | ($udev << 3) | $ufn;
		}
		last if $ubus == $bus;
		$bus = $ubus;
	}
	return $rid;
}

# The requester ranges a kernel printed as "$prefix SSSS:BB:DD.F..BB:DD.F"
# lines (the VT-d unit's scope, the AMD-Vi IOMMU's DeviceIDs), each
# [first, last] as segment << 16 | bus << 8 | devfn; and the MSI/MSI-X
# functions of run $r in none of them.
sub ranges_and_outside {
	my ($r, $prefix) = @_;
	my @ranges;
	for my $l (split /\n/, $r->{serial} // '') {
		my @f = $l =~ /^\Q$prefix\E ([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.(\d)\.\.([0-9a-f]{2}):([0-9a-f]{2})\.(\d)$/ or next;
		my $seg = hex($f[0]) << 16;
		push @ranges, [$seg | hex($f[1]) << 8 | hex($f[2]) << 3 | $f[3],
			       $seg | hex($f[4]) << 8 | hex($f[5]) << 3 | $f[6]];
	}
	my @outside;
	for my $d (@{$r->{devices} // []}) {
		next unless ($d->{mode} // '') =~ /^msix?$/;
		my ($seg, $bus, $dev, $fn) = parse_bdf($d->{bdf} // '');
		next unless defined $fn;
		my $rid = $seg << 16 | $bus << 8 | $dev << 3 | $fn;
		push @outside, $d->{bdf}
			unless grep { $rid >= $_->[0] && $rid <= $_->[1] } @ranges;
	}
	return (\@ranges, @outside);
}

sub remappable { my ($addr) = @_; return ($addr & 0xfff00010) == 0xfee00010; }

# The entry a remappable message names: handle (+ subhandle with SHV).
sub remap_index {
	my ($addr, $data) = @_;
	my $h = (($addr >> 5) & 0x7fff) | ((($addr >> 2) & 1) << 15);
	$h += $data & 0xffff if ($addr >> 3) & 1;
	return $h;
}

# Problems of remapping table entry $i against a line's vector $v sent
# by requester $sid (undef: not checked); "what" names it in the text.
sub irte_problems {
	my ($what, $i, $v, $sid) = @_;
	my $r = $HW->{remap} // {};
	my $e = $r->{irte}{$i};
	my @bad;
	push @bad, "$what names entry $i, line says irte " . ($v->{irte} // 'none')
		if ($v->{irte} // -1) != $i;
	return (@bad, "$what: entry $i beyond the table ($r->{size})")
		if $i >= ($r->{size} // 0);
	return (@bad, "$what: entry $i unread") unless $e;
	return (@bad, "$what: entry $i not present") unless $e->{present};
	push @bad, "$what: entry $i vector $e->{vector}, line says $v->{vector}"
		if $e->{vector} != ($v->{vector} // -1);
	push @bad, "$what: entry $i dest $e->{dest}, line says apic_id $v->{apic_id}"
		if $e->{dest} != ($v->{apic_id} // -1);
	push @bad, sprintf('%s: entry %d validates SID 0x%04x (SVT %d SQ %d), requester is 0x%04x',
			   $what, $i, $e->{sid}, $e->{svt}, $e->{sq}, $sid)
		if defined $sid && ($e->{svt} != 1 || $e->{sq} != 0 || $e->{sid} != $sid);
	return @bad;
}

# IO-APIC redirection entries from `info pic` ("pin N 0x<64-bit entry>"),
# decoded here: vector 7:0, polarity 13, trigger 15, mask 16, dest 63:56.
sub ioapic_entries {
	my ($mon) = @_;
	my %e;
	for my $l (split(/\n/, $mon->cmd('info pic'))) {
		next unless $l =~ /^\s*pin\s+(\d+)\s+0x([0-9a-f]{16})/;
		my ($pin, $hi, $lo) = ($1, hex(substr($2, 0, 8)), hex(substr($2, 8, 8)));
		$e{$pin} = { vector => $lo & 0xff, active_low => ($lo >> 13) & 1,
			     level => ($lo >> 15) & 1, masked => ($lo >> 16) & 1,
			     dest => $hi >> 24,
			     # remappable format (VT-d 5.1.5.1): bit 48, handle
			     # 14:0 in 63:49, 15 in 11
			     remap => ($hi >> 16) & 1,
			     handle => (($hi >> 17) & 0x7fff) | ((($lo >> 11) & 1) << 15) };
	}
	return \%e;
}


# x86-64 under AMD-Vi (the ready line's "remap":"amd-vi"): the unit's
# device table, read through the monitor, and for every vector a device
# line lists the entry its message names in its requester's own table
# (an IO-APIC input: the IO-APIC DeviceID's table, the vector field):
# $hw->{amdvi}{irte}{"RID/INDEX"} = { valid, dest, vector } (valid only
# when the requester's DTE remaps: IV set, IntCtl 10b).
sub amdvi_snapshot {
	my ($mon, $text, $hw) = @_;
	my ($base, $iodev) = $text =~ /^remap: on \(umsi\.remap=[\w-]+\): amd-vi unit 0x([0-9a-f]+), ioapic devid 0x([0-9a-f]+)/m;
	my $a = $hw->{amdvi} = { irte => {}, dte => {} };
	if (!defined $base) {
		$a->{error} = 'no "remap: on ... amd-vi unit" line';
		return;
	}
	$a->{base} = hex($base);
	my ($lo, $hi) = $mon->read32($a->{base}, 2);
	$a->{devtab} = (($lo // 0) & ~0xfff) + ($hi // 0) * 2**32;
	$a->{ndev} = ((($lo // 0) & 0x1ff) + 1) * 128;
	$a->{ioapic_rid} = defined $iodev ? hex($iodev) : undef;
	local $HW = $hw;
	my %dte;
	my $dte_of = sub {
		my ($rid) = @_;
		return $dte{$rid} if exists $dte{$rid};
		my @dte = $mon->read32($a->{devtab} + 32 * $rid, 8);
		return $dte{$rid} = undef unless @dte == 8;
		my $q2hi = $dte[5];
		$a->{dte}{$rid} = { iv => $dte[4] & 1, intctl => ($q2hi >> 28) & 3,
				    len => ($dte[4] >> 1) & 0xf,
				    root => ($dte[4] & ~0x3f) + ($q2hi & 0x3fff) * 2**32,
				    remaps => ($dte[4] & 1) && (($q2hi >> 28) & 3) == 2 };
		return $dte{$rid} = $a->{dte}{$rid};
	};
	for my $l ($text =~ /^UMSI (\{"event":"device".*\})\s*$/mg) {
		my $d = eval { decode_json($l) } or next;
		for my $v (@{$d->{vectors} // []}) {
			next unless defined $v->{irte};
			# An IO-APIC input's entry is in the IO-APIC's table.
			my $rid = defined $v->{gsi} ? $a->{ioapic_rid} : requester($d->{bdf} // '');
			next unless defined $rid && $rid < $a->{ndev};
			my $t = $dte_of->($rid) or next;
			my ($e) = $mon->read32($t->{root} + 4 * $v->{irte}, 1);
			$a->{irte}{"$rid/$v->{irte}"} = {
				valid => $t->{remaps} && defined $e && ($e & 1),
				dest => defined $e ? ($e >> 8) & 0xff : -1,
				vector => defined $e ? ($e >> 16) & 0xff : -1 };
		}
	}
}

sub amdvi { return $HW->{amdvi} ? 1 : 0; }

# The entry an AMD-Vi message names: $CUR_RID's table, index data 10:0.
sub amdvi_entry {
	my ($addr, $data) = @_;
	return undef unless defined $CUR_RID && $addr == 0xfee00000;
	my $e = $HW->{amdvi}{irte}{"$CUR_RID/" . (($data // 0) & 0x7ff)};
	return $e && $e->{valid} ? $e : undef;
}

sub riscv { return ($HW->{arch} // '') eq 'riscv64'; }
sub arm64 { return ($HW->{arch} // '') eq 'arm64'; }
# arm64 on a GICv2 with a v2m frame (the ready line's "ctl":"gicv2m").
sub v2m { return arm64() && ($HW->{its} // {})->{v2m}; }

sub msg_dest {
	my ($addr, $data) = @_;
	return $HW->{files}{$addr} // -1 if riscv();
	return -1 if arm64();	# an ITS or v2m message names no CPU
	if (amdvi()) {
		my $e = amdvi_entry($addr, $data);
		return $e ? $e->{dest} : -1;
	}
	if (remappable($addr)) {
		my $e = ($HW->{remap}{irte} // {})->{remap_index($addr, $data // 0)};
		return $e && $e->{present} ? $e->{dest} : -1;
	}
	return (($addr >> 12) & 0xff) | ((($addr >> 5) & 0x7f) << 8);
}

sub msg_ok {
	my ($addr) = @_;
	return defined $HW->{files}{$addr} if riscv();
	return $addr == $HW->{its}{setspi} && $addr != 0 if v2m();
	return $addr == $HW->{its}{translater} && $addr != 0 if arm64();
	return ($addr & 0xfff00000) == 0xfee00000 && $addr < 2**32;
}

# The vector (x86) or identity (IMSIC) a message's data delivers; under
# remapping the vector of the table entry the message names.
sub msg_vector {
	my ($data, $addr) = @_;
	return $data if riscv() || arm64();
	if (amdvi()) {
		my $e = amdvi_entry($addr // 0, $data);
		return $e ? $e->{vector} : -1;
	}
	if (defined $addr && remappable($addr)) {
		my $e = ($HW->{remap}{irte} // {})->{remap_index($addr, $data)};
		return $e && $e->{present} ? $e->{vector} : -1;
	}
	return $data & 0xff;
}

# The line's name for the CPU a vector targets.
sub line_hwid {
	my ($v) = @_;
	return riscv() ? ($v->{hart} // -1) : arm64() ? -1 :
		($v->{apic_id} // -1);
}

sub hwid_key { return riscv() ? 'hart' : arm64() ? 'mpidr' : 'apic_id'; }

# What a message's data must be for the line's vector @v: the identity,
# or on arm64 the EventID the line names.
sub want_data {
	my ($v) = @_;
	return v2m() ? $v->{spi} // -1 : arm64() ? $v->{event_id} // -1 :
	       $v->{vector};
}

# Check one UMSI device line against the hardware. Returns a list of
# problems (empty when all agree) and adds the pairs it sees to $pairs.
sub check_device {
	my ($d, $f, $pairs, $ioapic) = @_;
	my @bad;
	my $mode = $d->{mode} // '';
	my $bm = ($f->{command} >> 2) & 1;
	my $intx_dis = ($f->{command} >> 10) & 1;
	my $msi_en = $f->{msi} ? $f->{msi}{enable} : 0;
	my $msix_en = $f->{msix} ? $f->{msix}{enable} : 0;
	push @bad, sprintf('vendor/device %04x:%04x, line says %s:%s',
			   $f->{vendor}, $f->{device}, $d->{vendor}, $d->{device})
		if hex($d->{vendor}) != $f->{vendor} || hex($d->{device}) != $f->{device};
	if (defined $d->{pf}) {
		my $v = $f->{vf};
		push @bad, "line says VF $d->{vf_index} of $d->{pf}; no enabled SR-IOV capability there puts a VF here"
			unless $v;
		push @bad, "VF $v->{index} of its PF, line says $d->{vf_index}"
			if $v && $v->{index} != ($d->{vf_index} // -1);
		push @bad, 'VF BARs are not where the PF\'s VF BARs put them'
			if $v && !$v->{bars_ok};
	}
	my @vecs = @{$d->{vectors} // []};
	my $remap = $HW->{remap} && $HW->{remap}{on};
	my $rid = requester($d->{bdf});
	local $CUR_RID = $rid;
	push @bad, 'device line cut short: no closing continuation line'
		if $d->{incomplete};
	push @bad, sprintf('%d vectors listed, line says nvec %d', scalar @vecs, $d->{nvec})
		if defined $d->{nvec} && $d->{nvec} != @vecs;
	if ($mode eq 'msix') {
		my $x = $f->{msix} or return ('no MSI-X capability');
		push @bad, 'MSI-X not enabled' unless $x->{enable};
		push @bad, 'MSI-X function mask set' if $x->{fmask};
		push @bad, 'MSI enabled too' if $msi_en;
		push @bad, 'Bus Master off' unless $bm;
		# A VF has no INTx: its INTx Disable is read-only zero.
		push @bad, 'INTx Disable clear' unless $intx_dis || $f->{vf};
		return (@bad, 'MSI-X table unreadable') unless $x->{entries};
		my %listed;
		for my $v (@vecs) {
			my $e = $x->{entries}[$v->{index}];
			if (!$e) {
				push @bad, "index $v->{index} beyond the table";
				next;
			}
			$listed{$v->{index}} = 1;
			push @bad, sprintf('entry %d address 0x%x not an interrupt message',
					   $v->{index}, $e->{addr}) unless msg_ok($e->{addr});
			if ($remap && !remappable($e->{addr})) {
				push @bad, sprintf('entry %d address 0x%x: compatibility format under remapping',
						   $v->{index}, $e->{addr});
			} elsif ($remap) {
				push @bad, irte_problems("entry $v->{index}",
					remap_index($e->{addr}, $e->{data}), $v, $rid);
			}
			push @bad, sprintf('entry %d dest %d, line says %s %d',
					   $v->{index}, msg_dest($e->{addr}, $e->{data}), hwid_key(), line_hwid($v))
				if msg_dest($e->{addr}, $e->{data}) != line_hwid($v);
			push @bad, sprintf('entry %d %s %d, line says %d',
					   $v->{index}, v2m() ? 'SPI' : arm64() ? 'EventID' : 'vector',
					   msg_vector($e->{data}, $e->{addr}), want_data($v))
				if msg_vector($e->{data}, $e->{addr}) != want_data($v);
			# A managed IRQ shut down (its CPUs offline) must be masked
			# and its old vector is free for others; one disabled by
			# storm detection must be masked too.
			if ($v->{shutdown}) {
				push @bad, "entry $v->{index} shut down but unmasked" unless $e->{masked};
				next;
			}
			if ($v->{disabled}) {
				push @bad, "entry $v->{index} disabled but unmasked" unless $e->{masked};
			} else {
				push @bad, "entry $v->{index} masked" if $e->{masked};
			}
			push @{$pairs->{(v2m() ? 'spi' : arm64() ? $rid : msg_dest($e->{addr}, $e->{data})) . '/' .
					msg_vector($e->{data}, $e->{addr})}}, "$d->{bdf}#$v->{index}";
		}
		for my $i (0 .. $#{$x->{entries}}) {
			push @bad, "unlisted entry $i unmasked"
				if !$listed{$i} && !$x->{entries}[$i]{masked};
		}
	} elsif ($mode eq 'msi') {
		my $m = $f->{msi} or return ('no MSI capability');
		push @bad, 'MSI not enabled' unless $m->{enable};
		push @bad, 'MSI-X enabled too' if $msix_en;
		push @bad, 'Bus Master off' unless $bm;
		push @bad, 'INTx Disable clear' unless $intx_dis;
		my $block = 1 << $m->{mme};
		push @bad, "multiple message enable $block, line says reserved $d->{reserved}"
			if ($d->{reserved} // -1) != $block;
		push @bad, "MME $m->{mme} above MMC $m->{mmc}" if $m->{mme} > $m->{mmc};
		# Remappable: the data is a subhandle, message i sends data | i,
		# each naming its own entry; else the data is the base vector.
		# AMD-Vi: the data is the first entry's index, message i names
		# index data | i of the requester's table.
		my $rm = !riscv() && !arm64() && (amdvi() || remappable($m->{addr}));
		my $base = $rm ? $m->{data} & 0xffff : msg_vector($m->{data});
		push @bad, sprintf('data %s 0x%x not aligned to %d', $rm ? 'subhandle' : 'vector',
				   $base, $block)
			if $base % $block;
		push @bad, sprintf('address 0x%x not an interrupt message', $m->{addr})
			unless msg_ok($m->{addr});
		push @bad, sprintf('address 0x%x: compatibility format under remapping', $m->{addr})
			if $remap && !$rm;
		push @bad, sprintf('%d vectors listed, block holds %d', scalar @vecs, $block)
			if @vecs > $block;
		my $mdata = sub { return $rm ? $m->{data} | $_[0] : $m->{data}; };
		my $mvec = sub { return $rm ? msg_vector($mdata->($_[0]), $m->{addr}) : $base + $_[0]; };
		for my $v (@vecs) {
			my $i = $v->{index};
			push @bad, irte_problems("message $i", remap_index($m->{addr}, $mdata->($i)),
						 $v, $rid) if $rm && !amdvi();
			push @bad, sprintf('message %d dest %d, line says %s %d',
					   $i, msg_dest($m->{addr}, $mdata->($i)), hwid_key(), line_hwid($v))
				if msg_dest($m->{addr}, $mdata->($i)) != line_hwid($v);
			push @bad, sprintf('message %d %s %d, line says %d',
					   $i, v2m() ? 'SPI' : arm64() ? 'EventID' : 'vector',
					   $mvec->($i), want_data($v))
				if $mvec->($i) != want_data($v);
			push @bad, "message $i masked"
				if $m->{pvm} && (($m->{mask} >> $i) & 1);
		}
		for my $i (0 .. $block - 1) {
			# Under remapping only the listed messages have entries.
			next if $rm && !grep { $_->{index} == $i } @vecs;
			push @{$pairs->{(v2m() ? 'spi' : arm64() ? $rid : msg_dest($m->{addr}, $mdata->($i))) .
					'/' . $mvec->($i)}}, "$d->{bdf}#$i";
		}
	} elsif ($mode eq 'intx') {
		push @bad, 'MSI enabled' if $msi_en;
		push @bad, 'MSI-X enabled' if $msix_en;
		push @bad, 'INTx Disable set' if $intx_dis;
		push @bad, 'no interrupt pin' unless $f->{pin};
		for my $v (@vecs) {
			push @bad, "pin $v->{pin}, config space says " . chr(64 + $f->{pin})
				if ($v->{pin} // '') ne chr(64 + $f->{pin});
			if (arm64()) {
				# An SPI: on a GICv2 the trace tells (gicv2_check);
				# on a GICv3 GICD_IROUTER names the line's CPU.
				next if v2m();
				my $a = ($HW->{gicd_intx} // {})->{$v->{gsi} // -1};
				if (!$a) {
					push @bad, "GIC SPI " . ($v->{gsi} // '?') . " not read";
					next;
				}
				my $m = $v->{mpidr} // -1;
				my $want = ($m & 0xffffff);
				push @bad, sprintf('SPI %d GICD_IROUTER affinity 0x%x, line says mpidr 0x%x',
						   $v->{gsi}, $a->{aff}, $m)
					if $a->{irm} || $a->{aff} != $want;
				push @bad, "SPI $v->{gsi} edge-triggered, not level" if $a->{edge};
				push @bad, "SPI $v->{gsi} not enabled" unless $a->{enabled} || $v->{disabled};
				next;
			}
			if (riscv()) {
				# The APLIC in MSI mode: source GSI aimed at the
				# line's hart (its IMSIC file) and identity.
				my $a = ($HW->{aplic} // {})->{$v->{gsi} // -1};
				if (!$a) {
					push @bad, "APLIC source " . ($v->{gsi} // '?') . " not read";
					next;
				}
				my $file = ($HW->{its}{imsic} // 0) + 0x1000 * $a->{hart_index};
				my $hart = $HW->{files}{$file} // -1;
				push @bad, "APLIC source $v->{gsi} target hart index $a->{hart_index} (hart $hart), line says hart " . ($v->{hart} // '?')
					if $hart != ($v->{hart} // -2);
				push @bad, "APLIC source $v->{gsi} EIID $a->{eiid}, line says identity $v->{vector}"
					if $a->{eiid} != $v->{vector};
				push @bad, "APLIC source $v->{gsi} mode $a->{sm}, not level (6/7)"
					unless $a->{sm} == 6 || $a->{sm} == 7;
				push @bad, "APLIC source $v->{gsi} not enabled"
					unless $a->{enabled} || $v->{disabled};
				push @{$pairs->{"$hart/$v->{vector}"}}, "$d->{bdf} INTx (source $v->{gsi})"
					unless grep { /\(source $v->{gsi}\)$/ } @{$pairs->{"$hart/$v->{vector}"} // []};
				next;
			}
			my $e = $ioapic && $ioapic->{$v->{gsi} // -1};
			if (!$ioapic || !%$ioapic) {
				next;	# QEMU printed no IO-APIC table
			} elsif (!$e) {
				push @bad, "no IO-APIC input for gsi $v->{gsi}";
			} else {
				if (amdvi()) {
					# Compatibility format, destination 0, the
					# vector field an index of the IO-APIC's
					# table, whose entry sends to the line's CPU.
					my $rid = $HW->{amdvi}{ioapic_rid} // -1;
					my $t = $HW->{amdvi}{irte}{"$rid/$e->{vector}"};
					push @bad, "IO-APIC pin $v->{gsi}: remappable format under AMD-Vi"
						if $e->{remap};
					push @bad, "IO-APIC pin $v->{gsi} vector field $e->{vector}, line says irte " .
						($v->{irte} // 'none') if ($v->{irte} // -1) != $e->{vector};
					push @bad, "IO-APIC pin $v->{gsi} dest $e->{dest}: not 0 under AMD-Vi"
						if $e->{dest} != 0;
					if (!$t || !$t->{valid}) {
						push @bad, sprintf('IO-APIC pin %d: entry %d of DeviceID 0x%x not valid',
								   $v->{gsi}, $e->{vector}, $rid);
					} else {
						push @bad, "IO-APIC pin $v->{gsi}: entry $e->{vector} vector $t->{vector}, line says $v->{vector}"
							if $t->{vector} != $v->{vector};
						push @bad, "IO-APIC pin $v->{gsi}: entry $e->{vector} dest $t->{dest}, line says apic_id $v->{apic_id}"
							if $t->{dest} != $v->{apic_id};
					}
				} elsif ($e->{remap}) {
					push @bad, "IO-APIC pin $v->{gsi} vector $e->{vector}, line says $v->{vector}"
						if $e->{vector} != $v->{vector};
					push @bad, irte_problems("IO-APIC pin $v->{gsi}", $e->{handle}, $v,
								 $HW->{remap}{ioapic_sid});
				} else {
					push @bad, "IO-APIC pin $v->{gsi} vector $e->{vector}, line says $v->{vector}"
						if $e->{vector} != $v->{vector};
					push @bad, "IO-APIC pin $v->{gsi}: compatibility format under remapping"
						if $remap;
					push @bad, "IO-APIC pin $v->{gsi} dest $e->{dest}, line says apic_id $v->{apic_id}"
						if $e->{dest} != $v->{apic_id};
				}
				push @bad, "IO-APIC pin $v->{gsi} not level/active-low"
					unless $e->{level} && $e->{active_low};
				push @bad, "IO-APIC pin $v->{gsi} masked" if $e->{masked};
			}
		}
	} elsif ($mode eq 'none') {
		push @bad, 'MSI enabled' if $msi_en;
		push @bad, 'MSI-X enabled' if $msix_en;
		push @bad, 'no reason given' unless $d->{reason};
	} else {
		push @bad, "unknown mode '$mode'";
	}
	return @bad;
}

# arm64: the LPIs the device lines imply, LPI = first_lpi + vector (a
# global identity, below ncpus * nvec), each used once.
sub lpi_check {
	my ($hw, $r) = @_;
	my $its = $hw->{its} // {};
	my ($first, $nvec, $ncpus) = @{$its}{qw(first_lpi nvec ncpus)};
	my (%lpi, @bad);
	for my $d (@{$r->{devices}}) {
		next unless ($d->{mode} // '') =~ /^msix?$/;
		for my $v (@{$d->{vectors} // []}) {
			next if $v->{shutdown};
			if (!defined $v->{cpu} || !defined $v->{vector} ||
			    $v->{vector} >= ($nvec // 0) * ($ncpus // 0) ||
			    $v->{cpu} >= ($ncpus // 0)) {
				push @bad, "$d->{bdf}#$v->{index}: cpu/vector outside uMSI's LPIs";
				next;
			}
			push @{$lpi{$first + $v->{vector}}},
				"$d->{bdf}#$v->{index}";
		}
	}
	push @bad, map { "LPI $_: @{$lpi{$_}}" } grep { @{$lpi{$_}} > 1 } sort keys %lpi;
	return [!@bad, 'no LPI (first_lpi + vector) used twice', join('; ', @bad)];
}

# arm64 on a GICv2m: the distributor's state, from QEMU's trace of the
# guest's writes to it (-trace gic_dist_write) and of the CPUs'
# acknowledgements (-trace gic_acknowledge_irq): the monitor cannot read
# GICD itself (QEMU's GICv2 asks which CPU reads, and the monitor is
# none). Returns { targets => {INTID => GICD_ITARGETSR byte}, enabled =>
# {INTID => 0|1}, edge => {INTID => 0|1}, acks => {INTID => {CPU => n}} }.
sub gicv2_trace {
	my ($file) = @_;
	my (%word, %en, %acks);
	open(my $fh, '<', $file) or return undef;
	while (my $l = <$fh>) {
		if ($l =~ /gic_dist_write dist write at 0x([0-9a-f]+) size 4: 0x([0-9a-f]+)/) {
			my ($off, $v) = (hex($1), hex($2));
			if ($off >= 0x100 && $off < 0x200) {
				my $set = $off < 0x180;
				my $first = (($off - 0x100) % 0x80) * 8;
				for my $k (0 .. 31) {
					$en{$first + $k} = $set ? 1 : 0 if ($v >> $k) & 1;
				}
			} elsif (($off >= 0x800 && $off < 0xc00) || ($off >= 0xc00 && $off < 0xd00)) {
				$word{$off} = $v;
			}
		} elsif ($l =~ /gic_acknowledge_irq cpu (\d+) acknowledged irq (\d+)/) {
			$acks{$2}{$1}++ if $2 < 1020;
		}
	}
	close($fh);
	my (%targets, %edge);
	for my $off (keys %word) {
		if ($off < 0xc00) {
			$targets{$off - 0x800 + $_} = ($word{$off} >> (8 * $_)) & 0xff for 0 .. 3;
		} else {
			$edge{($off - 0xc00) * 4 + $_} = ($word{$off} >> (2 * $_ + 1)) & 1 for 0 .. 15;
		}
	}
	return { targets => \%targets, enabled => \%en, edge => \%edge, acks => \%acks };
}

# Each vector of the device lines against the distributor's trace: one of
# the frame's SPIs (first_spi + identity), no SPI twice, its target byte
# the line's CPU only (QEMU: interface n is CPU n), enabled, edge; with
# @fired (the kernel's fire lines), every acknowledgement of a fired SPI
# by that CPU and at least as many as the handler saw.
sub gicv2_check {
	my ($g, $r, $fired) = @_;
	my ($ready) = grep { ($_->{event} // '') eq 'ready' } @{$r->{umsi}};
	my $v2 = ($ready // {})->{v2m} // {};
	my (%seen, @bad);
	return ([0, 'QEMU trace of the GICv2 distributor', 'not read']) unless $g;
	for my $d (@{$r->{devices}}) {
		if (($d->{mode} // '') eq 'intx') {
			# A wired SPI: level, aimed at the line's CPU, enabled.
			for my $v (@{$d->{vectors} // []}) {
				my $spi = $v->{gsi} // -1;
				my $who = "$d->{bdf} INTx SPI $spi";
				my $t = $g->{targets}{$spi} // 0;
				push @bad, sprintf('%s: GICD_ITARGETSR 0x%02x, line says cpu %d', $who, $t, $v->{cpu})
					if $t != 1 << $v->{cpu};
				push @bad, "$who: not enabled" unless $g->{enabled}{$spi} || $v->{disabled};
				push @bad, "$who: edge-triggered, not level" if $g->{edge}{$spi};
			}
			next;
		}
		next unless ($d->{mode} // '') =~ /^msix?$/;
		for my $v (@{$d->{vectors} // []}) {
			my $spi = $v->{spi} // -1;
			my $who = "$d->{bdf}#$v->{index} SPI $spi";
			if ($spi < ($v2->{first_spi} // 0) ||
			    $spi >= ($v2->{first_spi} // 0) + ($v2->{spis} // 0)) {
				push @bad, "$who: not one of the frame's SPIs";
				next;
			}
			push @bad, "$who: not first_spi + vector"
				if $spi != $v2->{first_spi} + $v->{vector};
			push @{$seen{$spi}}, $who;
			my $t = $g->{targets}{$spi} // 0;
			push @bad, sprintf('%s: GICD_ITARGETSR 0x%02x, line says cpu %d', $who, $t, $v->{cpu})
				if $t != 1 << $v->{cpu};
			push @bad, "$who: not enabled (GICD_ISENABLER)" unless $g->{enabled}{$spi};
			push @bad, "$who: level-sensitive (GICD_ICFGR)" unless $g->{edge}{$spi};
		}
	}
	push @bad, map { "SPI $_: @{$seen{$_}}" } grep { @{$seen{$_}} > 1 } sort keys %seen;
	my @res = ([!@bad, 'distributor (QEMU trace): each SPI aimed at its CPU only, enabled, edge, none twice',
		    join('; ', @bad)]);
	if ($fired) {
		my @abad;
		for my $f (@$fired) {
			my ($d) = grep { $_->{bdf} eq $f->{bdf} } @{$r->{devices}};
			my ($v) = grep { $_->{index} == $f->{index} } @{($d // {})->{vectors} // []};
			next unless $v && defined $v->{spi};
			my $a = $g->{acks}{$v->{spi}} // {};
			my @other = grep { $_ != $f->{cpu} } keys %$a;
			push @abad, "SPI $v->{spi} ($f->{driver} #$f->{index}) acknowledged by cpu @other too"
				if @other;
			push @abad, "SPI $v->{spi} ($f->{driver} #$f->{index}): " . ($a->{$f->{cpu}} // 0) .
				" acknowledgements on cpu $f->{cpu}, handler saw $f->{received}"
				if ($a->{$f->{cpu}} // 0) < $f->{received};
		}
		push @res, [!@abad, 'QEMU trace: every fired SPI acknowledged by the CPU uMSI chose, as often as handled',
			    join('; ', @abad)];
	}
	return @res;
}

# All checks of one held run. Returns [ok, name, diagnostics] triples.
sub check {
	my ($hw, $r) = @_;
	my @res;
	if (!$hw || $hw->{error}) {
		return ([0, 'monitor snapshot', $hw ? $hw->{error} : 'none taken']);
	}
	my %pairs;
	local $HW = $hw;
	for my $d (@{$r->{devices}}) {
		my $f = $hw->{functions}{lc $d->{bdf}};
		if (!$f) {
			push @res, [0, "$d->{bdf} readable through ECAM", 'not read'];
			next;
		}
		my @bad = check_device($d, $f, \%pairs, $hw->{ioapic});
		push @res, [!@bad, "$d->{bdf} $d->{mode} matches the hardware",
			    join('; ', @bad)];
	}
	if (grep { ($_->{mode} // '') eq 'intx' } @{$r->{devices}}) {
		push @res, riscv() ?
			[scalar(%{$hw->{aplic} // {}}) ? 1 : 0,
			 'APLIC sources read (sourcecfg, target, enable)', 'none read'] :
			v2m() ? () :
			arm64() ?
			[scalar(%{$hw->{gicd_intx} // {}}) ? 1 : 0,
			 'GIC distributor SPIs read (GICD_IROUTER, enable, level)', 'none read'] :
			[scalar(%{$hw->{ioapic} // {}}) ? 1 : 0,
			 'IO-APIC entries read through info pic', 'none parsed'];
	}
	my @dups = grep { @{$pairs{$_}} > 1 } sort keys %pairs;
	push @res, [!@dups, riscv() ? 'no (hart, identity) pair used twice' :
			    v2m() ? 'no SPI used twice' :
			    arm64() ? 'no (DeviceID, EventID) pair used twice' :
			    'no (APIC ID, vector) pair used twice',
		    join('; ', map { "$_: @{$pairs{$_}}" } @dups)];
	push @res, lpi_check($hw, $r) if arm64() && !v2m();
	if (my $rm = $hw->{remap}) {
		my @rbad;
		push @rbad, $rm->{error} if $rm->{error};
		# GSTS (11.4.5): QIES 26, IRES 25, IRTPS 24 set; CFIS 23 clear.
		push @rbad, sprintf('GSTS 0x%08x: not QIES|IRES|IRTPS', $rm->{gsts} // 0)
			if !$rm->{error} && (($rm->{gsts} // 0) & 0x07000000) != 0x07000000;
		push @rbad, sprintf('GSTS 0x%08x: compatibility format let through (CFIS)', $rm->{gsts})
			if !$rm->{error} && ($rm->{gsts} >> 23) & 1;
		push @res, [!@rbad, sprintf('remapping unit on, table at 0x%x (%d entries)',
					    $rm->{table} // 0, $rm->{size} // 0),
			    join('; ', @rbad)];
	}
	# BARs the kernel printed against configuration space.
	my @barbad;
	for my $l (@{$r->{lines}}) {
		next unless $l =~ /^pci (\S+) bar (\d) (\S+)(?: prefetch)? 0x([0-9a-f]+)/;
		my ($bdf, $i, $kind, $addr) = (lc $1, $2, $3, hex($4));
		my $b = $hw->{functions}{$bdf} && $hw->{functions}{$bdf}{bars}[$i];
		push @barbad, "$bdf bar $i: kernel $kind 0x" . sprintf('%x', $addr) .
			', config space ' . ($b ? "$b->{kind} " . sprintf('0x%x', $b->{addr}) : 'none')
			if !$b || $b->{kind} ne $kind || $b->{addr} != $addr;
	}
	push @res, [!@barbad, 'BARs as the kernel reported them', join('; ', @barbad)];
	return @res;
}

# QEMU's trace: the last MAPTI of each (DeviceID, EventID) still mapped,
# and the writes to GITS_TRANSLATER per (requester ID, EventID).
sub its_trace {
	my ($file) = @_;
	my (%map, %writes, %remaps);
	my $movi = 0;
	open(my $t, '<', $file) or return (\%map, \%writes, 0, 0);
	while (<$t>) {
		if (/command MAPTI DeviceID (0x[0-9a-f]+) EventID (0x[0-9a-f]+) ICID (0x[0-9a-f]+) pINTID (0x[0-9a-f]+)/) {
			$map{hex($1) . '/' . hex($2)} = [hex($3), hex($4)];
			$remaps{hex($1) . '/' . hex($2)}++;
		} elsif (/command MOVI DeviceID (0x[0-9a-f]+) EventID (0x[0-9a-f]+) ICID (0x[0-9a-f]+)/) {
			my $m = $map{hex($1) . '/' . hex($2)};
			$m->[0] = hex($3) if $m;
			$movi++;
		} elsif (/command DISCARD DeviceID (0x[0-9a-f]+) EventID (0x[0-9a-f]+)/) {
			delete $map{hex($1) . '/' . hex($2)};
		} elsif (/TRANSLATER write: offset 0x40 data (0x[0-9a-f]+) size \d+ requester_id (0x[0-9a-f]+)/) {
			$writes{hex($2) . '/' . hex($1)}++;
		}
	}
	close($t);
	# MAPTIs of an event beyond its first: remaps (a move must not be one).
	my $again = 0;
	$again += $_ - 1 for values %remaps;
	return (\%map, \%writes, $movi, $again);
}

1;
