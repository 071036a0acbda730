#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
#
# `umsi inspect` on a real Linux: Debian's cloud kernel
# (linux-image-cloud-amd64) boots under QEMU TCG on a q35 machine with two
# CPUs and MSI and MSI-X functions driven by Linux's own drivers:
#   00:02.0  virtio-net, 8 MSI-X entries (3 used)       MSI-X
#   00:03.0  pcie-root-port (PME, AER)                  MSI-X, 1 entry
#   01:00.0  NVMe behind it, 65 entries (3 used)        MSI-X
#   00:04.0  ioh3420 root port (PME, AER)               MSI, 2 maskable
#   02:00.0  vmxnet3 behind it, 25 entries, link up     MSI-X (and MSI)
#   00:05.0  virtio-blk, 4 queues                       MSI-X
#   00:06.0  edu, no driver                             MSI, disabled
#   00:1f.2  the q35 AHCI, no driver                    MSI, disabled
# The cloud kernel has no e1000e driver (it is not in the package), so
# vmxnet3 stands in for a second NIC. The initramfs (busybox, lspci,
# setpci, build/umsi) is made in a temporary folder by
# scripts/linux-guest-initramfs; its /init runs the commands this script
# sends over the serial console and prints each output between markers.
#
# Twice, clean and after faults planted through sysfs, the guest's
# `umsi inspect --json` is compared with
#   (a) the guest's own lspci -nn -vvv: the functions, vendor and device,
#       every MSI and MSI-X field lspci prints (lib.pl's compare_cap), the
#       config space size (lspci -xxxx) and, in the text output, lspci's
#       MSI/MSI-X lines verbatim; `umsi inspect --dump` of the guest's
#       lspci -xxxx on the host must agree with live mode;
#   (b) QEMU, read through the HMP monitor while the guest waits:
#       configuration space over ECAM and, for MSI-X, every table entry
#       (address, data, vector control) and the Pending Bit Array; the
#       x86 decoding of every message is worked out here from the raw
#       address and data (SDM 11.11.1, 11.11.2);
#   (c) Linux: msi_irqs, /proc/interrupts (the IRQ of each entry, from
#       its hwirq on 6.1; the counts) and effective_affinity_list.
# The clean guest's `umsi inspect --check` exits 0. Then, one at a time,
# Bus Master Enable is cleared on virtio-net (setpci), the Function Mask
# set on vmxnet3 (setpci), and an unused NVMe entry unmasked in the table
# itself (busybox devmem on the BAR; the guest runs with iomem=relaxed so
# that /dev/mem reaches a BAR a driver claimed): after each, --check exits
# 1 and names the new fault, and nothing else but the Pending bits the
# Function Mask leaves behind on vmxnet3.
#
# Skips when QEMU, the kernel package, busybox-static or pciutils are
# missing (./build.sh installs them). A second, short boot without
# iomem=relaxed checks that umsi says why it cannot read a table the
# kernel keeps from user space (CONFIG_IO_STRICT_DEVMEM). The guests'
# console output is kept in build/test-logs/linux-guest*.serial.
use strict;
use warnings;
no warnings 'portable';
use JSON::PP;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(sleep time);
use lib "$FindBin::Bin/../qemu/lib";
use UmsiQemu ();
use UmsiCheck ();
require "$FindBin::Bin/lib.pl";

our ($UMSI, $ROOT);
my $T0 = time();
my $QEMU = $ENV{QEMU} // 'qemu-system-x86_64';
my $MKINITRD = "$ROOT/scripts/linux-guest-initramfs";
my $TIMEOUT = 300;

plan skip_all => "$QEMU is not installed (Debian: qemu-system-x86)"
	unless system("command -v $QEMU >/dev/null 2>&1") == 0;
chomp(my $KERNEL = `'$MKINITRD' --print-kernel 2>/dev/null` // '');
plan skip_all => 'no /boot/vmlinuz-*-cloud-amd64 (Debian: linux-image-cloud-amd64)'
	unless $KERNEL && -r $KERNEL;
plan skip_all => 'no busybox (Debian: busybox-static)'
	unless -x '/bin/busybox' || -x '/usr/bin/busybox';
plan skip_all => 'lspci or setpci is not installed (Debian: pciutils)'
	unless system('sh', '-c', 'command -v lspci >/dev/null && command -v setpci >/dev/null') >> 8 == 0;
plan skip_all => "$UMSI is not built" unless -x $UMSI;

my $dir = tempdir('umsi-linux-guest-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $initrd = "$dir/initrd.cpio";
system($MKINITRD, '--umsi', $UMSI, $initrd) == 0
	or BAIL_OUT("scripts/linux-guest-initramfs failed");
for my $img ('nvme.img', 'vblk.img') {
	open(my $f, '>', "$dir/$img") or die "$dir/$img: $!";
	truncate($f, 16 << 20) or die "truncate: $!";
	close($f);
}

my $g = Guest->start(
	dir => $dir, kernel => $KERNEL, initrd => $initrd, timeout => $TIMEOUT,
	append => 'console=ttyS0 iomem=relaxed panic=-1',
	devices => [
		'-netdev', 'hubport,id=n0,hubid=0',
		'-device', 'virtio-net-pci,netdev=n0,vectors=8,addr=0x2,romfile=',
		'-device', 'pcie-root-port,id=rp1,chassis=1,slot=1,bus=pcie.0,addr=0x3',
		'-drive', "file=$dir/nvme.img,if=none,format=raw,id=nv0",
		'-device', 'nvme,serial=umsi0,drive=nv0,bus=rp1',
		'-device', 'ioh3420,id=rp2,chassis=2,slot=2,bus=pcie.0,addr=0x4',
		'-netdev', 'hubport,id=n1,hubid=1',
		'-device', 'vmxnet3,netdev=n1,bus=rp2,romfile=',
		'-drive', "file=$dir/vblk.img,if=none,format=raw,id=vb0",
		'-device', 'virtio-blk-pci,drive=vb0,num-queues=4,addr=0x5',
		'-device', 'edu,addr=0x6',
	]);
my $ready = $g->wait_ready(240);
ok($ready, "the cloud kernel boots to the initramfs's /init" .
   ($ready ? " ($ready, " . sprintf('%.0f s', time() - $T0) . ')' : ''))
	or do { $g->stop('linux-guest.serial'); diag($g->tail(3000)); done_testing(); exit 1 };
unlike($g->{serial}->text(), qr/^\@\@\@ insmod .* failed/m, 'every module loads');

# Drivers bind, the NICs' links come up (vmxnet3 requests its IRQs when
# opened) and NVMe has its I/O queues.
my $s = $g->cmd('settle', <<'EOF', 90);
for n in /sys/class/net/*; do ip link set "${n##*/}" up; done
i=0
while [ $i -lt 600 ]; do
	[ -e /sys/block/nvme0n1 ] && grep -q -- '-rxtx-' /proc/interrupts && break
	sleep 0.1; i=$((i + 1))
done
sleep 1
for d in /sys/bus/pci/devices/*; do
	echo "${d##*/} $(basename "$(readlink "$d/driver")" 2>/dev/null)"
done
EOF
is($s->{rc}, 0, 'settle: drivers bound, links up');
my %driver = map { /^(\S+) (\S*)/ ? ($1, $2) : () } split /\n/, $s->{out};
my %want_driver = ('0000:00:02.0' => 'virtio-pci', '0000:00:03.0' => 'pcieport',
		   '0000:01:00.0' => 'nvme', '0000:00:04.0' => 'pcieport',
		   '0000:02:00.0' => 'vmxnet3', '0000:00:05.0' => 'virtio-pci');
is_deeply({ map { $_ => $driver{$_} } keys %want_driver }, \%want_driver,
	  "Linux's drivers are bound to the six functions") or diag($s->{out});

# --- The clean guest ------------------------------------------------------
my $clean = snapshot($g, 'clean');
compare_all($g, 'clean', $clean);
my %bdf_of = map { ($_->{vendor} . ':' . $_->{device}) => $_->{bdf} } @{$clean->{json}{devices}};
my $VNET = $bdf_of{'0x1af4:0x1000'} // '0000:00:02.0';
my $VMX = $bdf_of{'0x15ad:0x7b0'} // '0000:02:00.0';
my $NVME = $bdf_of{'0x1b36:0x10'} // '0000:01:00.0';

my $c = $g->cmd('check-clean', 'umsi inspect --check');
is($c->{rc}, 0, 'clean: umsi inspect --check exits 0') or diag($c->{out}, $c->{err});
like($c->{out}, qr/^check: no findings; \d+ functions checked$/m, 'clean: --check says no findings');
my $cj = $g->cmd('check-clean-json', 'umsi inspect --check --json');
my $cdoc = eval { decode_json($cj->{out}) };
is_deeply($cdoc && $cdoc->{findings}, [], 'clean: --check --json has no findings');
is($cdoc && $cdoc->{functions_checked}, scalar @{$clean->{json}{devices}},
   'clean: --check judged every function');
diag("clean: not checked: $_") for @{$cdoc ? $cdoc->{not_checked} : []};

# --- Faults, one at a time --------------------------------------------------
my %vmx = %{dev_of($clean, $VMX)};
my %nvme = %{dev_of($clean, $NVME)};
my $nvme_hw = $clean->{hw}{$NVME};
# An NVMe entry Linux does not use: masked, and no IRQ of Linux names it.
my %used = map { $_->{index} // -1 => 1 } @{$nvme{msix}{irqs} // []};
my ($spare) = grep { !$used{$_} && $nvme{msix}{entries}[$_]{masked} }
	      reverse 0 .. $nvme{msix}{table_size} - 1;
my $ctrl_addr = defined $spare && $nvme_hw && $nvme_hw->{msix}{table_addr}
	? $nvme_hw->{msix}{table_addr} + 16 * $spare + 12 : undef;
ok(defined $ctrl_addr, "NVMe has an unused masked entry (" . ($spare // 'none') .
   ') at a known physical address');

my @faults = (
	{ name => 'bme', bdf => $VNET, check => 'bus-master-off', entry => undef,
	  what => "Bus Master Enable cleared on virtio-net $VNET",
	  cmd => "setpci -s $VNET COMMAND=0:4" },
	{ name => 'fmask', bdf => $VMX, check => 'function-masked', entry => undef,
	  what => "MSI-X Function Mask set on vmxnet3 $VMX",
	  cmd => sprintf('setpci -s %s %x.w=4000:4000', $VMX, hex($vmx{msix}{cap}) + 2) },
	{ name => 'unmask', bdf => $NVME, check => 'unowned-entry', entry => $spare,
	  what => "NVMe $NVME entry " . ($spare // '?') . " unmasked in the table",
	  cmd => sprintf('devmem 0x%x 32 0', $ctrl_addr // 0) },
);
my (@planted, $last);
for my $f (@faults) {
	my $p = $g->cmd("fault-$f->{name}", $f->{cmd});
	is($p->{rc}, 0, "fault: $f->{what} ($f->{cmd})") or diag($p->{err});
	push @planted, $f;
	my $t = $g->cmd("check-$f->{name}", 'umsi inspect --check');
	is($t->{rc}, 1, "after $f->{name}: umsi inspect --check exits 1");
	my $where = $f->{bdf} . ' MSI-X' . (defined $f->{entry} ? " entry $f->{entry}" : '');
	like($t->{out}, qr/^\Q$where\E \[\Q$f->{check}\E\]: /m,
	     "after $f->{name}: the text names $where [$f->{check}]") or diag($t->{out});
	my $tj = $g->cmd("check-$f->{name}-json", 'umsi inspect --check --json');
	is($tj->{rc}, 1, "after $f->{name}: --check --json exits 1");
	my $doc = eval { decode_json($tj->{out}) } or do { fail("JSON: $@"); next };
	$last = $doc;
	for my $p (@planted) {
		ok(scalar(grep { finding_is($_, $p) } @{$doc->{findings}}),
		   "after $f->{name}: finding $p->{check} on $p->{bdf}" .
		   (defined $p->{entry} ? " entry $p->{entry}" : ''));
	}
	# Nothing else, but Pending bits on the function whose mask is set.
	my @other = grep { my $x = $_; !grep { finding_is($x, $_) } @planted } @{$doc->{findings}};
	my @unexplained = grep { !($_->{check} eq 'pending-masked' && $_->{bdf} eq $VMX &&
				  grep { $_->{name} eq 'fmask' } @planted) } @other;
	ok(!@unexplained, "after $f->{name}: no other finding") or
		diag(join("\n", map { "$_->{bdf} $_->{check} " . ($_->{entry} // '-') . ": $_->{message}" } @unexplained));
}

# --- The faulty guest, compared again --------------------------------------
my $after = snapshot($g, 'faults');
compare_all($g, 'faults', $after);
{
	my %l = %{$after->{lspci}};
	is($l{$VNET}{busmaster}, '-', "faults: lspci shows BusMaster- on $VNET");
	is($l{$VMX}{msix}{function_mask}, '+', "faults: lspci shows MSI-X Masked+ on $VMX");
	my $hv = $after->{hw}{$VNET};
	ok($hv && !($hv->{command} & 4), "faults: QEMU sees Bus Master Enable clear on $VNET");
	my $hx = $after->{hw}{$VMX};
	ok($hx && $hx->{msix}{fmask}, "faults: QEMU sees the Function Mask set on $VMX");
	my $hn = $after->{hw}{$NVME};
	ok($hn && defined $spare && !$hn->{msix}{entries}[$spare]{masked},
	   "faults: QEMU sees NVMe entry " . ($spare // '?') . " unmasked");
	ok(!dev_of($after, $NVME)->{msix}{entries}[$spare // 0]{masked},
	   "faults: umsi reads NVMe entry " . ($spare // '?') . " unmasked");

	# The register-level findings, worked out from lspci alone: MSI or
	# MSI-X enabled with BusMaster-, MSI-X enabled with Masked+.
	my (@want, @got);
	for my $bdf (sort keys %l) {
		my ($msi, $msix) = map { ($l{$bdf}{$_}{enabled} // '') eq '+' } qw(msi msix);
		push @want, "$bdf bus-master-off" if ($msi || $msix) && $l{$bdf}{busmaster} eq '-';
		push @want, "$bdf function-masked" if $msix && $l{$bdf}{msix}{function_mask} eq '+';
	}
	@got = sort map { "$_->{bdf} $_->{check}" }
		    grep { $_->{check} =~ /^(bus-master-off|function-masked)$/ } @{$last->{findings} // []};
	is_deeply(\@got, \@want, 'faults: --check flags Bus Master and Function Mask where lspci shows them');
}

my $rc = $g->stop('linux-guest.serial');
is($rc, 0, 'the guest powers off and QEMU exits 0');

# --- Without iomem=relaxed ---------------------------------------------------
# CONFIG_IO_STRICT_DEVMEM keeps a BAR that a driver claimed from user space
# (resourceN and /dev/mem alike): the table cannot be read, and umsi must
# say so and why rather than report entries or a clean table.
mkdir("$dir/strict") or die "$dir/strict: $!";
my $g2 = Guest->start(
	dir => "$dir/strict", kernel => $KERNEL, initrd => $initrd, timeout => 120,
	append => 'console=ttyS0 panic=-1',
	devices => ['-drive', "file=$dir/nvme.img,if=none,format=raw,id=nv0",
		    '-device', 'nvme,serial=umsi0,drive=nv0,addr=0x3']);
if (ok($g2->wait_ready(100), 'strict: the kernel boots without iomem=relaxed')) {
	$g2->cmd('strict-settle', 'i=0; while [ ! -e /sys/block/nvme0n1 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done');
	my $j = $g2->cmd('strict-json', 'umsi inspect -s 00:03.0 --json');
	my $doc = eval { decode_json($j->{out}) } // {};
	my ($n) = @{$doc->{devices} // []};
	ok($n && $n->{msix} && $n->{msix}{enabled}, 'strict: NVMe has MSI-X enabled');
	ok($n && !defined $n->{msix}{entries} && ($n->{msix}{entries_reason} // '') ne '',
	   'strict: its entries are null, with a reason') or diag($j->{out});
	like(join("\n", @{$doc->{notes} // []}), qr/iomem=relaxed/,
	     'strict: a note names iomem=relaxed') or diag($j->{out});
	my $k = $g2->cmd('strict-check', 'umsi inspect --check');
	is($k->{rc}, 0, 'strict: --check exits 0 (nothing found)');
	like($k->{out}, qr/^not checked: .*MSI-X tables? of 1 function/m,
	     'strict: --check says the table was not checked') or diag($k->{out});
}
is($g2->stop('linux-guest-strict.serial'), 0, 'strict: the guest powers off');
diag(sprintf('linux-guest: %.0f s in all, two boots', time() - $T0));
done_testing();

# ===========================================================================

sub dev_of {
	my ($snap, $bdf) = @_;
	my ($d) = grep { $_->{bdf} eq $bdf } @{$snap->{json}{devices}};
	return $d // {};
}

sub finding_is {
	my ($x, $f) = @_;
	return $x->{bdf} eq $f->{bdf} && $x->{check} eq $f->{check} &&
	       $x->{capability} eq 'msix' &&
	       (defined $f->{entry} ? ($x->{entry} // -1) == $f->{entry} : !defined $x->{entry});
}

# What the guest says about itself, at one moment, and what QEMU says.
sub snapshot {
	my ($g, $tag) = @_;
	my %s;
	my $j = $g->cmd("$tag-json", 'umsi inspect --json');
	is($j->{rc}, 0, "$tag: umsi inspect --json exits 0") or diag($j->{err});
	$s{json} = eval { decode_json($j->{out}) };
	ok($s{json}, "$tag: the JSON parses") or BAIL_OUT("$tag: $@");
	is($s{json}{source}, 'live', "$tag: live mode");
	diag("$tag: note: $_") for @{$s{json}{notes} // []};
	is_deeply($s{json}{errors}, [], "$tag: no errors") or
		diag(join("\n", map { ($_->{bdf} // '-') . ": $_->{message}" } @{$s{json}{errors}}));
	$s{text} = $g->cmd("$tag-text", 'umsi inspect')->{out};
	my $l = $g->cmd("$tag-lspci", 'lspci -nn -vvv');
	is($l->{rc}, 0, "$tag: lspci -nn -vvv exits 0");
	$s{lspci} = parse_lspci($l->{out});
	$s{hexdump} = $g->cmd("$tag-lspci-x", 'lspci -xxxx')->{out};
	$s{interrupts} = $g->cmd("$tag-interrupts", 'cat /proc/interrupts')->{out};
	$s{msi_irqs} = $g->cmd("$tag-msi-irqs", <<'EOF')->{out};
for d in /sys/bus/pci/devices/*; do
	[ -d "$d/msi_irqs" ] || continue
	for i in "$d"/msi_irqs/*; do
		[ -e "$i" ] && echo "${d##*/} ${i##*/} $(cat "$i")"
	done
done
EOF
	$s{affinity} = $g->cmd("$tag-affinity",
		'for i in /proc/irq/*/effective_affinity_list; do echo "$i $(cat $i)"; done')->{out};
	# QEMU's view while the guest waits for its next command.
	$s{hw} = read_hw($g->monitor(), $s{json});
	return \%s;
}

# Config space over ECAM, the MSI-X table and the PBA, for each function.
sub read_hw {
	my ($mon, $doc) = @_;
	return {} unless $mon;
	my $ecam = UmsiCheck::ecam_base($mon) // return {};
	my %hw;
	for my $d (@{$doc->{devices}}) {
		my ($seg, $bus, $dev, $fn) = UmsiCheck::parse_bdf($d->{bdf}) or next;
		my @w = $mon->read32($ecam + ($bus << 20) + ($dev << 15) + ($fn << 12), 64);
		next unless @w == 64;
		my $f = UmsiCheck::decode_function($mon, \@w);
		if (my $m = $f->{msi}) {
			my $o = $m->{cap} + ($m->{is64} ? 0x14 : 0x10);
			$m->{pending} = UmsiCheck::b32(\@w, $o) if $m->{pvm};
		}
		if (my $x = $f->{msix}) {
			my $pba = UmsiCheck::b32(\@w, $x->{cap} + 8);
			my $bar = $f->{bars}[$pba & 7];
			if ($bar && $bar->{kind} ne 'io' && $bar->{addr}) {
				my @p = $mon->read32($bar->{addr} + ($pba & ~7), int(($x->{size} + 31) / 32));
				$x->{pba} = \@p;
			}
			@$x{qw(pba_bir pba_offset)} = ($pba & 7, $pba & ~7);
			# The whole Vector Control word, not only the Mask bit.
			if ($x->{table_addr}) {
				my @raw = $mon->read32($x->{table_addr}, 4 * $x->{size});
				$x->{entries}[$_]{ctrl} = $raw[4 * $_ + 3] for 0 .. $x->{size} - 1;
			}
		}
		$hw{$d->{bdf}} = $f;
	}
	return \%hw;
}

# lspci -nn -vvv: for each function its IDs, Command bits and the MSI and
# MSI-X fields in lib.pl's lspci_caps() shape, with lspci's MSI/MSI-X lines.
sub parse_lspci {
	my ($text) = @_;
	my (%dev, $cur, $cap);
	for (split /\n/, $text) {
		push @{$dev{$cur}{lines}}, $_
			if $cur && (/^\tCapabilities: \[[0-9a-f]+\] MSI(-X)?: / ||
				    ($cap && /^\t\t(Address|Masking|Vector table|PBA):/));
		if (/^(?:([0-9a-f]{4,6}):)?([0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) .*\[([0-9a-f]{4}):([0-9a-f]{4})\](?: \(rev [0-9a-f]+\))?(?: \(prog-if [^)]*\))?$/) {
			$cur = sprintf('%04x', hex($1 // '0')) . ":$2";
			$dev{$cur} = { vendor => hex($3), device => hex($4) };
			$cap = undef;
		} elsif (!$cur) {
			next;
		} elsif (/^\tControl: .*BusMaster([+-])/) {
			$dev{$cur}{busmaster} = $1;
		} elsif (/^\tCapabilities: \[([0-9a-f]+)\] MSI: Enable(.) Count=(\d+)\/(\d+) Maskable(.) 64bit(.)/) {
			$cap = $dev{$cur}{msi} ? {} : ($dev{$cur}{msi} = { cap => hex($1), enabled => $2,
				count_enabled => $3, count_cap => $4, maskable => $5, addr64 => $6 });
		} elsif (/^\tCapabilities: \[([0-9a-f]+)\] MSI-X: Enable(.) Count=(\d+) Masked(.)/) {
			$cap = $dev{$cur}{msix} ? {} : ($dev{$cur}{msix} = { cap => hex($1), enabled => $2,
				table_size => $3, function_mask => $4 });
		} elsif (/^\tCapabilities:/) {
			$cap = undef;
		} elsif ($cap && /^\t\tAddress: ([0-9a-f]+)  Data: ([0-9a-f]+)/) {
			@$cap{qw(address data)} = (hex($1), hex($2));
		} elsif ($cap && /^\t\tMasking: ([0-9a-f]+)  Pending: ([0-9a-f]+)/) {
			@$cap{qw(mask pending)} = (hex($1), hex($2));
		} elsif ($cap && /^\t\tVector table: BAR=(\d) offset=([0-9a-f]+)/) {
			@$cap{qw(table_bar table_offset)} = ($1, hex($2));
		} elsif ($cap && /^\t\tPBA: BAR=(\d) offset=([0-9a-f]+)/) {
			@$cap{qw(pba_bar pba_offset)} = ($1, hex($2));
		}
	}
	return \%dev;
}

# lspci -xxxx: bytes of config space shown per function.
sub hexdump_sizes {
	my ($text) = @_;
	my (%n, $cur);
	for (split /\n/, $text) {
		if (/^(?:([0-9a-f]{4,6}):)?([0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) /) {
			$cur = sprintf('%04x', hex($1 // '0')) . ":$2";
			$n{$cur} = 0;
		} elsif ($cur && /^[0-9a-f]{2,3}: /) {
			$n{$cur} += 16;
		}
	}
	return \%n;
}

# The x86 message an address and data make, as an x86 CPU decodes it
# (SDM 11.11.1 and 11.11.2), in umsi's JSON names.
sub x86_msg {
	my ($addr, $data) = @_;
	return { x86 => JSON::PP::false } if $addr >> 32 || ($addr & 0xfff00000) != 0xfee00000;
	return { x86 => JSON::PP::true, remapped => JSON::PP::true } if $addr & 0x10;
	my @dm = ('fixed', 'lowest-priority', 'smi', 'reserved', 'nmi', 'init', 'reserved', 'extint');
	return { x86 => JSON::PP::true, remapped => JSON::PP::false,
		 dest_id => ($addr >> 12) & 0xff,
		 dest_mode => $addr & 4 ? 'logical' : 'physical',
		 redirection_hint => $addr & 8 ? JSON::PP::true : JSON::PP::false,
		 delivery_mode => $dm[($data >> 8) & 7],
		 trigger => $data & 0x8000 ? 'level' : 'edge',
		 vector => $data & 0xff };
}

# Differences between the x86 fields of one umsi message and x86_msg().
sub msg_diff {
	my ($j, $addr, $data) = @_;
	my $w = x86_msg($addr, $data);
	my @bad;
	for my $k (sort keys %$w) {
		my ($a, $b) = ($j->{$k}, $w->{$k});
		next if $k eq 'dest_id' && ($addr >> 5 & 0x7f);  # extended ID bits
		push @bad, "$k: ours " . ($a // 'null') . ", expected $b"
			if !defined $a || "$a" ne "$b";
	}
	return @bad;
}

sub compare_all {
	my ($g, $tag, $s) = @_;
	my $doc = $s->{json};
	my %dev = map { $_->{bdf} => $_ } @{$doc->{devices}};
	my $lsp = $s->{lspci};

	# (a) lspci, inside the guest.
	is_deeply([sort keys %dev], [sort keys %$lsp], "$tag: the same functions as lspci");
	my $sizes = hexdump_sizes($s->{hexdump});
	my (%text, $tb);
	for (split /\n/, $s->{text}) {
		$tb = $1 if /^([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) /;
		$text{$tb}{$_} = 1 if $tb;
	}
	my ($fields, $caps) = (0, 0);
	for my $bdf (sort keys %$lsp) {
		my $d = $dev{$bdf} or next;
		my $w = $lsp->{$bdf};
		is_deeply([hex($d->{vendor}), hex($d->{device})], [$w->{vendor}, $w->{device}],
			  "$tag $bdf: vendor and device as lspci");
		is($d->{config_size}, $sizes->{$bdf}, "$tag $bdf: config_size $d->{config_size}, as lspci -xxxx shows");
		for my $kind (qw(msi msix)) {
			if (!$w->{$kind}) {
				ok(!defined $d->{$kind}, "$tag $bdf: no $kind, as lspci");
				next;
			}
			my @bad = compare_cap($w->{$kind}, $d->{$kind} // {});
			$fields += keys %{$w->{$kind}};
			$caps++;
			ok(!@bad, "$tag $bdf $kind: " . scalar(keys %{$w->{$kind}}) .
			   ' fields agree with lspci -vvv') or diag(join("\n", @bad));
		}
		my @lines = @{$w->{lines} // []};
		my @miss = grep { !$text{$bdf}{$_} } @lines;
		ok(!@miss, "$tag $bdf: the text output has lspci's " . scalar(@lines) .
		   ' MSI/MSI-X lines verbatim') or diag(join("\n", @miss));
	}
	diag("$tag: $fields MSI/MSI-X fields of $caps capabilities compared with the guest's lspci");

	# The same configuration space through the dump path, on the host.
	my $dump = "$dir/$tag-lspci-xxxx.txt";
	open(my $fh, '>', $dump) or die "$dump: $!";
	print $fh $s->{hexdump};
	close($fh);
	my ($rc, $out, $err) = run_cmd($UMSI, 'inspect', '--dump', $dump, '--json');
	my $dd = eval { decode_json($out) };
	ok($dd && $rc == 0, "$tag: umsi inspect --dump of the guest's lspci -xxxx") or diag($err);
	if ($dd) {
		my %dm = map { $_->{bdf} => $_ } @{$dd->{devices}};
		my @bad;
		for my $bdf (sort keys %dev) {
			for my $kind (qw(msi msix)) {
				my ($a, $b) = ($dev{$bdf}{$kind}, $dm{$bdf} && $dm{$bdf}{$kind});
				if (!$a || !$b) {
					push @bad, "$bdf $kind: live " . ($a ? 'has' : 'none') .
						   ', dump ' . ($b ? 'has' : 'none') if $a || $b;
					next;
				}
				for my $k (sort keys %$a) {
					next if $k =~ /^(entries|entries_reason|irqs)$/;
					my ($x, $y) = (JSON::PP->new->canonical->allow_nonref->encode($a->{$k}),
						       JSON::PP->new->canonical->allow_nonref->encode($b->{$k}));
					push @bad, "$bdf $kind.$k: live $x, dump $y" if $x ne $y;
				}
			}
		}
		ok(!@bad, "$tag: live mode and the dump of the same config space agree") or diag(join("\n", @bad));
	}

	# (b) QEMU, through the monitor.
	my $hw = $s->{hw};
	ok(keys %$hw == keys %dev, "$tag: QEMU's config space read for all " . scalar(keys %dev) . ' functions');
	my ($entries, $msgs) = (0, 0);
	for my $bdf (sort keys %dev) {
		my ($d, $h) = ($dev{$bdf}, $hw->{$bdf});
		next unless $h;
		my @bad;
		push @bad, sprintf('vendor:device ours %s:%s, QEMU %04x:%04x', $d->{vendor}, $d->{device},
				   $h->{vendor}, $h->{device})
			if hex($d->{vendor}) != $h->{vendor} || hex($d->{device}) != $h->{device};
		if (my $m = $h->{msi}) {
			my $j = $d->{msi} // {};
			my %w = (cap => $m->{cap}, enabled => $m->{enable}, count_cap => 1 << $m->{mmc},
				 count_enabled => 1 << $m->{mme}, addr64 => $m->{is64},
				 maskable => $m->{pvm}, address => $m->{addr}, data => $m->{data});
			$w{mask} = $m->{mask} if $m->{pvm};
			push @bad, cmp_fields("msi", \%w, $j);
			# Pending bits can only appear between the two reads.
			if ($m->{pvm} && defined $j->{pending}) {
				my $p = hex($j->{pending});
				push @bad, sprintf('msi.pending: ours 0x%x, QEMU 0x%x', $p, $m->{pending})
					if ($p & ~$m->{pending}) || (($m->{pending} & ~$p) & ~$m->{mask});
			}
			push @bad, map { "msi message: $_" } msg_diff($j->{message} // {}, $m->{addr}, $m->{data})
				if $m->{enable};
			$msgs++ if $m->{enable};
		} elsif ($d->{msi}) {
			push @bad, 'msi: ours has one, QEMU none';
		}
		if (my $x = $h->{msix}) {
			my $j = $d->{msix} // {};
			my %w = (cap => $x->{cap}, enabled => $x->{enable}, function_mask => $x->{fmask},
				 table_size => $x->{size}, table_bar => $x->{bir},
				 table_offset => $x->{offset}, pba_bar => $x->{pba_bir},
				 pba_offset => $x->{pba_offset});
			push @bad, cmp_fields('msix', \%w, $j);
			my $ents = $j->{entries};
			if (!$ents) {
				push @bad, 'msix.entries: ours null (' . ($j->{entries_reason} // '') . ')';
			} elsif (@$ents != $x->{size}) {
				push @bad, 'msix.entries: ours ' . scalar(@$ents) . ", QEMU $x->{size}";
			} else {
				for my $i (0 .. $x->{size} - 1) {
					my ($e, $q) = ($ents->[$i], $x->{entries}[$i]);
					my $pend = $x->{pba} ? ($x->{pba}[$i >> 5] >> ($i & 31)) & 1 : undef;
					my %we = (index => $i, address => $q->{addr}, data => $q->{data},
						  ctrl => $q->{ctrl}, masked => $q->{masked});
					push @bad, cmp_fields("msix entry $i", \%we, $e);
					if (defined $pend) {
						my $masked = $q->{masked} || $x->{fmask};
						push @bad, "msix entry $i pending: ours " . ($e->{pending} ? 1 : 0) . ", QEMU $pend"
							if ($e->{pending} && !$pend) || (!$e->{pending} && $pend && !$masked);
					} else {
						push @bad, "msix entry $i: the PBA could not be read through the monitor";
					}
					push @bad, map { "msix entry $i: $_" } msg_diff($e, $q->{addr}, $q->{data});
					$entries++;
					$msgs++ unless $q->{masked};
				}
			}
		} elsif ($d->{msix}) {
			push @bad, 'msix: ours has one, QEMU none';
		}
		ok(!@bad, "$tag $bdf: agrees with QEMU's config space" .
		   ($h->{msix} ? ', MSI-X table and PBA' : '') . ' (monitor)') or diag(join("\n", @bad));
	}
	diag("$tag: $entries MSI-X entries and $msgs unmasked or enabled messages compared with QEMU");

	# (c) Linux's view: msi_irqs, /proc/interrupts, effective affinity.
	my %irq_of;		# bdf -> { irq -> kind }
	for (split /\n/, $s->{msi_irqs}) {
		$irq_of{$1}{$2} = $3 if /^(\S+) (\d+) (msix?)$/;
	}
	my %proc;		# irq -> { hwirq, chip, actions, counts }
	my $ncpu;
	for (split /\n/, $s->{interrupts}) {
		if (!defined $ncpu && /^\s+CPU/) {
			$ncpu = () = /CPU\d+/g;
			next;
		}
		next unless defined $ncpu && /^\s*(\d+):((?:\s+\d+){$ncpu})\s+(\S+)\s+(\d+)-(\S+)\s*(.*)$/;
		$proc{$1} = { counts => [split ' ', $2], chip => $3, hwirq => $4, actions => $6 };
	}
	my %aff = map { m{^/proc/irq/(\d+)/effective_affinity_list (\S+)} ? ($1, $2) : () }
		  split /\n/, $s->{affinity};
	is_deeply($doc->{cpus}, [0 .. ($ncpu // 0) - 1], "$tag: CPU columns as /proc/interrupts");
	my ($nirq, $tied) = (0, 0);
	for my $bdf (sort keys %dev) {
		my $d = $dev{$bdf};
		my ($seg, $bus, $dv, $fn) = UmsiCheck::parse_bdf($bdf);
		my @bad;
		my %want = %{$irq_of{$bdf} // {}};
		my %got;
		for my $kind (qw(msi msix)) {
			my $c = $d->{$kind} or next;
			for my $q (@{$c->{irqs} // []}) {
				$got{$q->{irq}} = $kind;
				$nirq++;
				my $p = $proc{$q->{irq}};
				if (!$p) {
					push @bad, "IRQ $q->{irq}: not in /proc/interrupts";
					next;
				}
				# Linux 6.1 prints "PCI-MSI <hwirq>", hwirq = domain << 27 |
				# bus << 19 | devfn << 11 | entry; 6.2 and later
				# "PCI-MSIX-<bdf> <entry>" (or PCI-MSI-<bdf>).
				my $idx = $p->{chip} =~ /^(IR-)?PCI-MSIX?-/ ? $p->{hwirq} :
					  $p->{hwirq} - (($bus << 19) | ((($dv << 3) | $fn) << 11));
				push @bad, "IRQ $q->{irq}: index ours " . ($q->{index} // 'null') . ", hwirq $p->{hwirq} says $idx"
					if !defined $q->{index} || $q->{index} != $idx;
				push @bad, "IRQ $q->{irq}: chip ours '$q->{chip}', /proc/interrupts '$p->{chip}'"
					if $q->{chip} ne $p->{chip};
				push @bad, "IRQ $q->{irq}: actions ours '$q->{actions}', /proc/interrupts '$p->{actions}'"
					if $q->{actions} ne $p->{actions};
				my @c = @{$q->{counts} // []};
				push @bad, "IRQ $q->{irq}: counts ours [@c], /proc/interrupts later [@{$p->{counts}}]"
					if @c != @{$p->{counts}} || grep { $c[$_] > $p->{counts}[$_] } 0 .. $#c;
				push @bad, "IRQ $q->{irq}: effective affinity ours " . ($q->{effective_affinity} // 'null') .
					   ', /proc/irq ' . ($aff{$q->{irq}} // 'none')
					if ($q->{effective_affinity} // '') ne ($aff{$q->{irq}} // '');
				# The table entry carries the same IRQ.
				my $e;
				if ($kind eq 'msix' && defined $q->{index} && $c->{entries}) {
					$e = $c->{entries}[$q->{index}];
					my @f = qw(irq counts effective_affinity cpu_vector target_cpu chip actions);
					my $js = JSON::PP->new->canonical;
					push @bad, "entry $q->{index}: IRQ fields ours " . $js->encode({ map { $_ => $e->{$_} } @f }) .
						   ", in the IRQ list " . $js->encode({ map { $_ => $q->{$_} } @f })
						if $js->encode({ map { $_ => $e->{$_} } @f }) ne $js->encode({ map { $_ => $q->{$_} } @f });
				}
				# What the device sends reaches the CPU Linux set the
				# IRQ up on: in logical flat mode (two CPUs, xAPIC)
				# destination bit n is CPU n. This ties each entry
				# (or the MSI message) to the right IRQ.
				my $m = $kind eq 'msix' ? $e : $c->{message};
				if ($m && $m->{x86} && !$m->{remapped} && ($m->{dest_mode} // '') eq 'logical' &&
				    ($kind eq 'msi' || !$e->{masked}) && ($aff{$q->{irq}} // '') =~ /^(\d+)$/) {
					push @bad, "IRQ $q->{irq}: message to logical destination $m->{dest_id}, affinity CPU $1"
						if $m->{dest_id} != 1 << $1;
					$tied++;
				}
			}
		}
		is_deeply(\%got, \%want, "$tag $bdf: IRQs as msi_irqs (" . scalar(keys %want) . ')');
		ok(!@bad, "$tag $bdf: IRQs agree with /proc/interrupts and /proc/irq") or diag(join("\n", @bad))
			if %want;
	}
	diag("$tag: $nirq Linux IRQs compared, $tied of their messages tied to the CPU of their affinity");
	ok($tied >= 10, "$tag: messages of at least 10 IRQs tied to their CPU");
}

sub cmp_fields {
	my ($what, $w, $j) = @_;
	my @bad;
	for my $k (sort keys %$w) {
		my ($wv, $jv) = ($w->{$k}, $j->{$k});
		my $ok;
		if (!defined $jv) {
			$ok = 0;
		} elsif (JSON::PP::is_bool($jv)) {
			$ok = !!$jv == !!$wv;
		} elsif ($jv =~ /^0x[0-9a-f]+$/) {
			$ok = hex($jv) == $wv;
		} else {
			$ok = $jv == $wv;
		}
		push @bad, sprintf('%s.%s: ours %s, QEMU 0x%x', $what, $k, $jv // 'null', $wv) unless $ok;
	}
	return @bad;
}

# ===========================================================================
# The guest: QEMU with the serial console on its standard input and output.
package Guest;

use strict;
use warnings;
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(sleep time);
use IO::Handle;
use MIME::Base64 ();

sub start {
	my ($class, %o) = @_;
	my $serial = "$o{dir}/serial.log";
	my $sock = "$o{dir}/monitor.sock";
	open(my $t, '>', $serial) or die "$serial: $!";
	close($t);
	my @cmd = ('timeout', '-k', '5', $o{timeout}, $QEMU,
		   '-nodefaults', '-no-user-config', '-machine', 'q35', '-accel', 'tcg',
		   '-m', '512M', '-smp', '2', '-display', 'none', '-vga', 'none',
		   '-no-reboot', '-kernel', $o{kernel}, '-initrd', $o{initrd},
		   '-append', $o{append}, '-serial', 'stdio',
		   '-monitor', "unix:$sock,server=on,wait=off", @{$o{devices}});
	pipe(my $r, my $w) or die "pipe: $!";
	my $pid = fork() // die "fork: $!";
	if (!$pid) {
		close($w);
		open(STDIN, '<&', $r) or die;
		open(STDOUT, '>', $serial) or die;
		open(STDERR, '>', "$o{dir}/qemu.err") or die;
		exec(@cmd) or exit(127);
	}
	close($r);
	$w->autoflush(1);
	my $deadline = time() + $o{timeout} + 10;
	return bless { pid => $pid, w => $w, sock => $sock, dir => $o{dir},
		       serial => UmsiQemu::Serial->new($serial, $deadline),
		       cmd => join(' ', @cmd), names => {} }, $class;
}

sub wait_ready {
	my ($self, $timeout) = @_;
	my $l = $self->{serial}->wait_line(qr/^\@\@\@ READY /, $timeout);
	return $l ? ($l =~ /^\@\@\@ READY (\S+)/)[0] : undef;
}

# Run one command in the guest: { out, err, rc } (rc -1: no answer).
sub cmd {
	my ($self, $name, $cmd, $timeout) = @_;
	die "step $name twice" if $self->{names}{$name}++;
	my $s = $self->{serial};
	$s->mark();
	print { $self->{w} } "$name " . MIME::Base64::encode_base64($cmd, '') . "\n";
	my $end = $s->wait_line(qr/^\@\@\@ END \Q$name\E rc=\d+$/, $timeout // 60);
	my $t = $s->since_mark();
	return { out => '', err => "no answer from the guest to $name", rc => -1 } unless $end;
	my ($out, $err, $rc) = $t =~ /^\@\@\@ BEGIN \Q$name\E\n(.*?)\n^\@\@\@ STDERR \Q$name\E\n(.*?)\n^\@\@\@ END \Q$name\E rc=(\d+)$/ms;
	return { out => $out // '', err => $err // '', rc => $rc // -1 };
}

sub monitor {
	my ($self) = @_;
	$self->{mon} //= UmsiQemu::Monitor->new($self->{sock});
	return $self->{mon};
}

sub tail {
	my ($self, $n) = @_;
	my $t = $self->{serial}->text();
	$t = substr($t, -$n) if length($t) > $n;
	return $t . UmsiQemu::slurp("$self->{dir}/qemu.err");
}

# Power the guest off; QEMU's exit status (124: killed by the timeout).
# The console output is kept as build/test-logs/$log.
sub stop {
	my ($self, $log) = @_;
	print { $self->{w} } "poweroff\n";
	close($self->{w});
	delete $self->{mon};		# closes the monitor's socket
	my $end = time() + 60;
	my $st;
	while (time() < $end) {
		if (waitpid($self->{pid}, WNOHANG) == $self->{pid}) {
			$st = $? >> 8;
			last;
		}
		sleep(0.1);
	}
	if (!defined $st) {
		kill('KILL', $self->{pid});
		waitpid($self->{pid}, 0);
		$st = 124;
	}
	my $logs = "$ROOT/" . ($ENV{BUILD} // 'build') . '/test-logs';
	system('mkdir', '-p', $logs);
	system('cp', "$self->{dir}/serial.log", "$logs/$log");
	return $st;
}
