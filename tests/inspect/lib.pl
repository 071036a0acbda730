# SPDX-License-Identifier: MIT
#
# Shared helpers of the `umsi inspect` test scripts: where things are.
#   UMSI       the umsi binary (default: <repo>/build/umsi, or $BUILD/umsi)
#   PCI_DUMPS  the real dumps (default: <repo>/tests/data/pci-dumps, which
#              every clone has; tests/data/README.md says where they come from)
use strict;
use warnings;
no warnings 'portable';       # 64-bit MSI addresses through hex()
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Path ();

our $ROOT = abs_path(dirname(__FILE__) . '/../..');
our $UMSI = $ENV{UMSI} // "$ROOT/" . ($ENV{BUILD} // 'build') . '/umsi';
our $DUMPS = $ENV{PCI_DUMPS} // "$ROOT/tests/data/pci-dumps";

# Run a command; return (exit status, stdout, stderr).
sub run_cmd {
	my (@cmd) = @_;
	my $err = "/tmp/umsi-inspect-test.$$.err";
	my $pid = open(my $fh, '-|') // die "fork: $!";
	if (!$pid) {
		open(STDERR, '>', $err) or die;
		exec(@cmd) or die "exec $cmd[0]: $!";
	}
	local $/;
	my $out = <$fh> // '';
	close($fh);
	my $rc = $? >> 8;
	open(my $e, '<', $err) or die;
	my $stderr = <$e> // '';
	close($e);
	unlink($err);
	return ($rc, $out, $stderr);
}

# The dump files (everything but the README).
sub dump_files {
	opendir(my $d, $DUMPS) or return ();
	my @f = sort grep { !/^\./ && !/\.md$/ && -f "$DUMPS/$_" } readdir($d);
	closedir($d);
	return map { "$DUMPS/$_" } @f;
}

# A configuration space under construction: 256 (or $size) bytes, zeroed.
sub cfg_new {
	my ($vendor, $device, $size) = @_;
	my @c = (0) x ($size // 256);
	cfg_w16(\@c, 0, $vendor // 0x8086);
	cfg_w16(\@c, 2, $device // 0x1234);
	return \@c;
}
sub cfg_w8  { my ($c, $o, $v) = @_; $c->[$o] = $v & 0xff }
sub cfg_w16 { my ($c, $o, $v) = @_; cfg_w8($c, $o + $_, $v >> (8 * $_)) for 0 .. 1 }
sub cfg_w32 { my ($c, $o, $v) = @_; cfg_w8($c, $o + $_, $v >> (8 * $_)) for 0 .. 3 }

# Link a capability list: cap_list($c, [0x40, 0x05], [0x60, 0x11], ...).
sub cap_list {
	my ($c, @caps) = @_;
	$c->[6] |= 0x10;                # Status: Capabilities List
	$c->[0x34] = @caps ? $caps[0][0] : 0;
	for my $i (0 .. $#caps) {
		my ($off, $id) = @{$caps[$i]};
		$c->[$off] = $id;
		$c->[$off + 1] = $i < $#caps ? $caps[$i + 1][0] : 0;
	}
}

# lspci -xxx text for one function; $rows limits how many 16-byte rows.
sub dump_text {
	my ($bdf, $c, $rows) = @_;
	my $t = "$bdf Device: test function\n";
	my $n = $rows // @$c / 16;
	for my $r (0 .. $n - 1) {
		$t .= sprintf('%02x:', $r * 16) .
		      join('', map { sprintf(' %02x', $c->[$r * 16 + $_]) } 0 .. 15) . "\n";
	}
	return $t . "\n";
}

# A function of a made-up sysfs tree under $root: config space, the
# `resource` file (BAR n start/size from $o{bars}{n} = [start, size]),
# resourceN files ($o{res}{n} = bytes) and msi_irqs ($o{irqs}{irq} = kind).
sub sysfs_fn {
	my ($root, $bdf, $c, %o) = @_;
	my $d = "$root/sys/bus/pci/devices/$bdf";
	File::Path::make_path("$d/msi_irqs");
	my $cfg = pack('C*', @$c);
	$cfg = substr($cfg, 0, $o{cfg_len}) if $o{cfg_len};
	write_file("$d/config", $cfg);
	my $res = '';
	for my $i (0 .. 6) {
		my ($s, $z) = @{$o{bars}{$i} // [0, 0]};
		$res .= sprintf("0x%016x 0x%016x 0x%016x\n", $s, $z ? $s + $z - 1 : 0,
				$z ? 0x40200 : 0);
	}
	write_file("$d/resource", $res);
	write_file("$d/resource$_", $o{res}{$_}) for keys %{$o{res} // {}};
	write_file("$d/msi_irqs/$_", "$o{irqs}{$_}\n") for keys %{$o{irqs} // {}};
}

sub write_file {
	my ($path, $text) = @_;
	open(my $f, '>', $path) or die "$path: $!";
	binmode($f);
	print $f $text;
	close($f);
}

# Parse `lspci ARGS -vvv`: { bdf => { msi => {...}, msix => {...}, lines => [...] } },
# where lines are lspci's MSI and MSI-X lines, verbatim.
sub lspci_caps {
	my (@args) = @_;
	my (%dev, $cur, $cap);
	for (split /\n/, `lspci @args -vvv 2>/dev/null`) {
		push @{$dev{$cur}{lines}}, $_
			if $cur && (/^\tCapabilities: \[[0-9a-f]+\] MSI(-X)?: / ||
				    ($cap && /^\t\t(Address|Masking|Vector table|PBA):/));
		if (/^(?:([0-9a-f]{4,6}):)?([0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) /) {
			$cur = sprintf('%04x', hex($1 // '0')) . ":$2";
			$dev{$cur} = {};
			$cap = undef;
		} elsif (/^\tCapabilities: \[([0-9a-f]+)\] MSI: Enable(.) Count=(\d+)\/(\d+) Maskable(.) 64bit(.)/) {
			# A second MSI capability: lspci prints it, we report the first.
			$cap = $dev{$cur}{msi} ? {} : ($dev{$cur}{msi} = { cap => hex($1), enabled => $2,
				count_enabled => $3, count_cap => $4,
				maskable => $5, addr64 => $6 });
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

my %num = map { $_ => 1 } qw(count_enabled count_cap table_size table_bar pba_bar);
my %hexf = map { $_ => 1 } qw(cap address data mask pending table_offset pba_offset);

# Compare lspci's fields of one capability with our JSON; list disagreements.
sub compare_cap {
	my ($w, $j) = @_;
	my @bad;
	for my $k (sort keys %$w) {
		my ($wv, $jv) = ($w->{$k}, $j->{$k});
		if (!defined $jv) {
			push @bad, "$k: lspci $wv, ours null";
		} elsif ($num{$k}) {
			push @bad, "$k: lspci $wv, ours $jv" if $jv != $wv;
		} elsif ($hexf{$k}) {
			push @bad, "$k: lspci $wv, ours $jv"
				if $jv !~ /^0x[0-9a-f]+$/ || hex($jv) != $wv;
		} elsif (($wv eq '+') != !!$jv) {
			push @bad, "$k: lspci $wv, ours " . ($jv ? '+' : '-');
		}
	}
	return @bad;
}

1;
